"""Where a shell command may work outside its workspace in ways that checking its paths
as written, from the workspace's root, cannot see: a change of directory (`cd ..`, `cd`
alone, `pushd`, `popd`, `git -C ..`, `git --work-tree=..`, `env --chdir=/`, `make -C..`),
a search from above (`find .. -delete`), `CDPATH` (where `cd` looks first), and a file
written at a path computed when it runs (`cp a $HOME/../b`, `touch ~/../b`, `> $OUT`)."""

from __future__ import annotations

import itertools
import re

from toolrun.errors import SandboxViolation
from toolrun.sandbox.commands import SimpleCommand
from toolrun.sandbox.paths import Workspace

# Programs whose operands are files they create, change or delete.
WRITERS = frozenset(
    {"cp", "mv", "rm", "rmdir", "touch", "mkdir", "ln", "chmod", "chown", "tee", "truncate"}
)
_DIRECTORY_OPTIONS = {"-C", "--chdir", "--directory", "--work-tree", "--git-dir"}
_COMPUTED = re.compile(r"[$`]|^~")  # expanded when it runs: the checks see it unexpanded
_GLOB = re.compile(r"[*?\[\]{}]")


def places_outside(
    commands: list[SimpleCommand], lines: list[list[str]], workspace: Workspace
) -> list[str]:
    """Each directory change, search root or computed write target of `commands` (whose
    command lines, wrapped ones included, are `lines`) that is, or may be, outside
    `workspace` (as `name target`)."""
    found = [
        f"{operator} {target}"
        for command in commands
        for operator, target, _ in command.redirects
        if ">" in operator and _COMPUTED.search(target)
    ]
    # `cd NAME` looks for NAME in CDPATH's directories first.
    found += [a for command in commands for a in command.assignments if a.startswith("CDPATH=")]
    for words in lines:
        name, args = words[0], words[1:]
        targets = _directory_options(args)
        if name == "popd":
            found.append(name)
        elif name in {"cd", "pushd"}:
            targets += [a for a in args if not a.startswith("-") or a == "-"] or ["~"]
        elif name == "find":
            targets += list(itertools.takewhile(lambda a: a[:1] not in {"-", "(", "!"}, args))
        if name in WRITERS:
            targets += [a for a in args if _COMPUTED.search(a)]
        found += [f"{name} {t}" for t in dict.fromkeys(targets) if _leaves(t, workspace)]
    return found


def _directory_options(args: list[str]) -> list[str]:
    """The values of -C DIR, -CDIR, --chdir=DIR, --directory DIR, --work-tree=DIR,
    --git-dir DIR (env, git, make, tar)."""
    found = []
    for at, word in enumerate(args):
        option, equals, value = word.partition("=")
        if word in _DIRECTORY_OPTIONS and at + 1 < len(args):
            found.append(args[at + 1])
        elif equals and option in _DIRECTORY_OPTIONS:
            found.append(value)
        elif word.startswith("-C") and len(word) > 2:
            found.append(word[2:])
    return found


def _leaves(target: str, workspace: Workspace) -> bool:
    if target == "-" or _COMPUTED.search(target) or _GLOB.search(target):
        return True
    try:
        workspace.resolve(target)
    except SandboxViolation:
        return True
    return False
