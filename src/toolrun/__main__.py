"""`python -m toolrun`: the same as the `toolrun` command."""

from toolrun.cli import main

main()
