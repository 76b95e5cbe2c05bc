"""The kernel's side of the sandbox: namespaces, a fresh root, Landlock, seccomp.

Standard library only and light on imports: this package runs in the forked child of a
worker between fork and exec, and as a launcher script (`launch.py`) for programs that
other libraries start (an MCP stdio server).
"""
