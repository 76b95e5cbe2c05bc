"""Shell command allowlisting on the parsed command, never on the raw string.

Every simple command bash would run — in pipelines, lists, subshells, functions, command
and process substitutions, here-strings — is found with a real shell grammar (bashlex).
Each must name an allowlisted program by a literal word; wrappers (`env`, `timeout`,
`nice`, `xargs`, `sh -c`, `find -exec` ...) are looked through; constructs that run code
the allowlist cannot see (`eval`, `python -c`, `git -c`, `PATH=` prefixes) are refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import bashlex  # type: ignore[import-untyped]
import bashlex.errors  # type: ignore[import-untyped]

from toolrun.errors import SandboxViolation
from toolrun.sandbox.paths import Workspace

DEFAULT_ALLOWLIST = frozenset(
    {
        "git",
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "rg",
        "find",
        "python",
        "python3",
        "pytest",
        "pip",
        "npm",
        "node",
        "cargo",
        "make",
        "echo",
        "printf",
        "sort",
        "uniq",
        "diff",
        "sleep",
        "pwd",
        "true",
        "false",
        "mkdir",
        "touch",
        "cd",
        "test",
        "[",
        "cut",
        "tr",
        "basename",
        "dirname",
        "date",
        "seq",
        "env",
        "timeout",
        "nice",
        "xargs",
        "exit",
        # Changing files inside the workspace; risk (rm medium, rm -rf high) decides whether
        # they wait for approval.
        "cp",
        "mv",
        "rm",
    }
)
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh"}
_NEVER = {"eval", "source", ".", "exec", "alias", "builtin", "command", "enable", "trap"}
_INLINE_CODE = {
    "python": {"-c"},
    "python3": {"-c"},
    "node": {"-e", "--eval", "-p", "--print"},
    "perl": {"-e", "-E"},
    "ruby": {"-e"},
}
_READS_CODE_FROM_STDIN = {"python", "python3", "node", "perl", "ruby"}


def dangerous_assignment(name: str) -> bool:
    """Whether setting this variable would change what runs or where (PATH, LD_*,
    BASH_ENV, CDPATH...)."""
    return bool(_DANGEROUS_ASSIGNMENT.match(name))


_DANGEROUS_ASSIGNMENT = re.compile(
    r"^(PATH|CDPATH|IFS|ENV|BASH_ENV|PROMPT_COMMAND|EDITOR|VISUAL|PAGER|\w+_PAGER|LD_\w+|GIT_\w+"
    r"|PYTHON\w*|NODE_OPTIONS|PERL5\w*|RUBYOPT)$"
)
_SAFE_DEVICES = re.compile(r"^/dev/(null|stdout|stderr|stdin|fd/\d+)$")
_GLOB = re.compile(r"[*?\[\]{}~]")
# Options that take a value, per wrapper, so the wrapped command is found after them.
_WRAPPER_VALUE_OPTIONS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "nice": {"-n", "--adjustment"},
    "xargs": {"-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--max-args", "--max-procs"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"},
}


@dataclass(frozen=True)
class SimpleCommand:
    """One command as bash would run it: its words and where its output goes."""

    words: tuple[str, ...]
    literal: tuple[bool, ...]  # False where a word holds an expansion ($x, $(...), `...`)
    assignments: tuple[str, ...]
    redirects: tuple[tuple[str, str, bool], ...]  # (operator, target, target is literal)


def simple_commands(source: str) -> list[SimpleCommand]:
    """Every simple command in `source`, nested ones included.

    Raises:
        SandboxViolation: the command cannot be parsed.
    """
    try:
        trees = bashlex.parse(source)
    except (
        bashlex.errors.ParsingError,
        NotImplementedError,
        IndexError,
        AttributeError,
        RecursionError,
    ) as exc:
        raise SandboxViolation(f"command could not be parsed, so it is refused: {exc}") from exc
    found: list[SimpleCommand] = []
    try:
        for tree in trees:
            found.extend(_walk(tree))
    except RecursionError as exc:
        raise SandboxViolation("command is nested too deeply, so it is refused") from exc
    return found


def command_lines(commands: Iterable[SimpleCommand]) -> Iterator[list[str]]:
    """The words of every command these run, wrapped ones and `sh -c` scripts included.

    Raises:
        SandboxViolation: an `sh -c` script in them cannot be parsed.
    """
    for command in commands:
        yield from _unwrapped(list(command.words), list(command.literal), depth=0)


def _unwrapped(words: list[str], literal: list[bool], depth: int) -> Iterator[list[str]]:
    if not words or depth > 8:
        return
    yield words
    name, args = words[0], words[1:]
    for inner_words, inner_literal in _wrapped(name, args, literal[1:]):
        yield from _unwrapped(inner_words, inner_literal, depth + 1)
    if name in _SHELLS and "-c" in args[:-1] and literal[args.index("-c") + 2]:
        yield from command_lines(simple_commands(args[args.index("-c") + 1]))


@dataclass(frozen=True)
class CommandPolicy:
    """An allowlist of program names, checked against every command a line would run."""

    allowed: frozenset[str] = DEFAULT_ALLOWLIST

    def check(self, source: str, workspace: Workspace) -> None:
        """Raises SandboxViolation naming the first command or construct not allowed."""
        for command in simple_commands(source):
            self._check_command(command, workspace, depth=0)

    def _check_command(self, command: SimpleCommand, workspace: Workspace, depth: int) -> None:
        for assignment in command.assignments:
            name = assignment.partition("=")[0]
            if _DANGEROUS_ASSIGNMENT.match(name):
                raise SandboxViolation(f"setting {name} is not allowed: it changes what runs")
        for operator, target, literal in command.redirects:
            _check_redirect(operator, target, literal, workspace)
        if command.words:
            self._check_words(list(command.words), list(command.literal), workspace, depth)

    def _check_words(
        self, words: list[str], literal: list[bool], workspace: Workspace, depth: int
    ) -> None:
        if depth > 8:
            raise SandboxViolation("command nests wrappers too deeply")
        name = words[0]
        if not literal[0] or _GLOB.search(name):
            raise SandboxViolation(f"command name is not a literal word: {name}")
        if "/" in name:
            raise SandboxViolation(f"commands are run by name, not by path: {name}")
        if name in _NEVER:
            raise SandboxViolation(f"{name} is not allowed: it runs code the allowlist cannot see")
        if name not in self.allowed and name not in _SHELLS:
            raise SandboxViolation(f"command not in allowlist: {name}")
        args, args_literal = words[1:], literal[1:]
        for inner_words, inner_literal in _wrapped(name, args, args_literal):
            self._check_words(inner_words, inner_literal, workspace, depth + 1)
        if name in _SHELLS:
            self._check_shell(name, args, args_literal, workspace)
        _check_arguments(name, args)

    def _check_shell(
        self, name: str, args: list[str], literal: list[bool], workspace: Workspace
    ) -> None:
        if "-c" not in args or args.index("-c") + 1 >= len(args):
            raise SandboxViolation(f"{name} is only allowed as `{name} -c '<commands>'`")
        script_at = args.index("-c") + 1
        if not literal[script_at]:
            raise SandboxViolation(f"{name} -c needs a literal script")
        self.check(args[script_at], workspace)


def _wrapped(
    name: str, args: list[str], literal: list[bool]
) -> Iterator[tuple[list[str], list[bool]]]:
    """The command a wrapper runs, if `name` is one (env, timeout, nice, xargs, find)."""
    if name == "find":
        for at, word in enumerate(args):
            if word in {"-exec", "-execdir", "-ok", "-okdir"}:
                end = next(
                    (i for i in range(at + 1, len(args)) if args[i] in {";", "+"}), len(args)
                )
                if end > at + 1:
                    yield args[at + 1 : end], literal[at + 1 : end]
        return
    if name not in _WRAPPER_VALUE_OPTIONS:
        return
    at = 0
    takes_value = _WRAPPER_VALUE_OPTIONS[name]
    while at < len(args):
        word = args[at]
        if word == "--":
            at += 1
            break
        if name == "env" and "=" in word and not word.startswith("-"):
            variable = word.partition("=")[0]
            if _DANGEROUS_ASSIGNMENT.match(variable):
                raise SandboxViolation(f"setting {variable} is not allowed: it changes what runs")
            at += 1
            continue
        if word.startswith("-"):
            at += 2 if word in takes_value else 1
            continue
        break
    if name == "timeout" and at < len(args):
        at += 1  # the duration
    if at < len(args):
        yield args[at:], literal[at:]


def _check_arguments(name: str, args: list[str]) -> None:
    """Arguments that make an allowlisted program run code the allowlist cannot see."""
    inline = _INLINE_CODE.get(name, set())
    for word in args:
        if word in inline or any(
            word.startswith(f"{flag}=") for flag in inline if flag.startswith("--")
        ):
            raise SandboxViolation(f"inline code is not allowed: {name} {word}")
    if name in _READS_CODE_FROM_STDIN and (not args or args[0] == "-"):
        raise SandboxViolation(f"{name} reading a program from stdin is not allowed")
    if name == "git":
        for word in args:
            if word in {"-c", "--config-env"} or word.startswith(("--config-env=", "--exec-path")):
                raise SandboxViolation(f"git {word} is not allowed: it can run any command")
            if not word.startswith("-"):
                break  # the subcommand: options after it are the subcommand's


def _check_redirect(operator: str, target: str, literal: bool, workspace: Workspace) -> None:
    if not _writes(operator, target):
        return
    if not literal:
        raise SandboxViolation(f"redirect target is not a literal path: {target}")
    if writes_outside(operator, target, workspace):
        raise SandboxViolation(f"redirect outside the workspace: {target}")


def writes_outside(operator: str, target: str, workspace: Workspace) -> bool:
    """True for an output redirect to a path outside the workspace (or to a device other
    than /dev/null and the standard streams)."""
    if not _writes(operator, target) or _SAFE_DEVICES.match(target):
        return False
    try:
        workspace.resolve(target)
    except SandboxViolation:
        return True
    return False


def _writes(operator: str, target: str) -> bool:
    return operator not in {"<", "<<<", "<<", "<&", ">&"} and not target.isdigit()


def _walk(node: Any) -> Iterator[SimpleCommand]:
    """Simple commands under a bashlex node, depth first, substitutions included.

    Raises:
        SandboxViolation: code bashlex leaves unparsed (inside ``${...}`` or a here-document).
    """
    _check_opaque(node)
    if node.kind == "command":
        yield _simple(node)
    for child in _children(node):
        yield from _walk(child)


_RUNS_CODE = re.compile(r"\$\(|`|<\(|>\(")


def _check_opaque(node: Any) -> None:
    """Refuse substitutions where bashlex keeps text it does not parse: they would run
    unchecked (``${x:-$(id)}``, a here-document body with ``$(...)``)."""
    if node.kind == "parameter" and _RUNS_CODE.search(node.value):
        raise SandboxViolation(f"command substitution inside ${{...}} is not allowed: {node.value}")
    heredoc = getattr(node, "heredoc", None)
    if heredoc is not None and _RUNS_CODE.search(heredoc.value):
        raise SandboxViolation("command substitution inside a here-document is not allowed")


def _children(node: Any) -> Iterable[Any]:
    for attribute in ("parts", "list"):
        yield from getattr(node, attribute, None) or ()
    for attribute in ("command", "output"):
        child = getattr(node, attribute, None)
        if child is not None and hasattr(child, "kind"):
            yield child


def _simple(node: Any) -> SimpleCommand:
    words: list[str] = []
    literal: list[bool] = []
    assignments: list[str] = []
    redirects: list[tuple[str, str, bool]] = []
    for part in node.parts:
        if part.kind == "word":
            words.append(part.word)
            literal.append(not getattr(part, "parts", None))
        elif part.kind == "assignment":
            assignments.append(part.word)
        elif part.kind == "redirect" and hasattr(part.output, "kind"):
            target = part.output
            redirects.append((part.type, target.word, not getattr(target, "parts", None)))
    return SimpleCommand(tuple(words), tuple(literal), tuple(assignments), tuple(redirects))
