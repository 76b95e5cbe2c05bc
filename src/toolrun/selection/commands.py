"""Commands a task gives to run: after the word "command" ("using the command echo
%time%") or before it ("using the echo command"), a program shells know after a word of
using it ("with du -sh", "using docker ps"), any program with an option after "run"
whose name no word has ("run pip-audit -r requirements.txt"), quoted after a word of
running it ("run `pytest -x`"; in backticks any program with an option: "with `mkdocs
build --strict`"), or the task itself when it is one ("npm install axios --save"), as
the task writes them; and the program a task starts a session of ("start a Python
REPL": python, in lowercase), for a parameter that takes a command
(`kinds.commands`)."""

from __future__ import annotations

import re

from toolrun.selection.phrases import NOT_AN_END
from toolrun.selection.quotes import CODE, QUOTED, quote
from toolrun.selection.text import STOP_WORDS, words

# … and a command's, not a directory either: "." after a space ("ls ."), ".." after one
# or a "/" ("cd ..", "cd ../.."); "ls /tmp/." ends at its last ".".
_COMMAND_END = re.compile(rf"{NOT_AN_END}(?:(?<!\s)(?<![\s/]\.)\.|[!?])(?=\s|$)")


# A command given after the word "command" ("using the command echo %time%", "run the
# command tasklist /FI "IMAGENAME eq Code.exe""): a program's name in lowercase, then the
# rest of its sentence or line as written, quotes and all ("the command called start
# calc": a word naming it is not its). Prose is not one: "the command line", "the
# command to list files".
_COMMAND = re.compile(
    r"\b(?i:command)(?:[ \t]*:)?(?:[ \t]+(?i:called|named))?[ \t]+"
    r"(?P<program>[a-z][\w.+-]*)(?=[ \t.,;!?\"'`]|$)",
    re.M,
)
# … or before it, after a word of using one: "say hi using the echo command", "show the
# date using the echo %date% command", "using the start microsoft.windows.camera: command"
# (a program's name in lowercase, then at most five words, none "command", "or" or
# "and", no comma).
_COMMAND_BEFORE = re.compile(
    r"\b(?i:using|use|via|run|execute)[ \t]+(?i:the[ \t]+)?"
    r"(?P<command>(?!command\b)(?P<program>[a-z][\w.+-]*)"
    r"(?:[ \t]+(?!(?i:command|or|and)\b)[^\s\"'`,;]+){0,5}?)[ \t]+(?i:command)\b"
)
# … or with no word "command", after a word of using one ("with" too), where the program
# is one that shells know by that name ("using docker --version", "please use docker ps
# to find out", "using dir Desktop", "with du -sh"; not "using machine learning"): the
# program and at most five words, up to a comma, a sentence's end, or a word that goes
# on to something else ("run pytest on the tests folder": "pytest").
_GOES_ON = r"(?i:to|for|and|or|then|please|with|on|in|so|but)"
_PROGRAM_USED = re.compile(
    r"\b(?P<marker>(?i:using|use|via|run|execute|with))[ \t]+(?i:the[ \t]+)?"
    r"(?P<command>(?P<program>[a-z][\w+-]*(?:\.[\w+-]+)*)"
    rf"(?:[ \t]+(?!(?:{_GOES_ON}|command)\b)[^\s\"'`,;]+){{0,5}})"
    rf"(?=[ \t]*(?:[,;\n]|[.!?](?:\s|$)|$)|[ \t]+{_GOES_ON}\b)"
)
# A quoted command after a word of running it ("run `pytest -x tests`", 'execute "npm
# test"', "use `docker ps` to list them", "try running `make test`"), in the characters
# just before the quote.
_RUN_BEFORE = re.compile(
    r"\b(?P<marker>run|running|execute|executing|use|using|via|with|try)[ \t]+"
    r"(?:the[ \t]+)?(?:command[ \t]*:?[ \t]*)?\Z",
    re.I,
)
_BEFORE_QUOTE = 40
# What a quote after "with" replaces, in its clause: "replace `a` with `b`", "replace the
# old install line in the README with `b`" (the verbs of `facts`' replace pair).
_REPLACED_WITH = re.compile(
    r"\b(?:replace|substitute)[ \t]+"
    r"(?:`[^`]*`|'[^']*'|\"[^\"]*\"|[^\s,.;]+(?:[ \t]+[^\s,.;]+){0,6}?)[ \t]+with[ \t]+\Z",
    re.I,
)
_CLAUSE_BREAK = re.compile(r"[.;!?\n](?=\s)|\n")
# A name no word has: "pip-audit", "python3.11", "python3" (not "e2e", "k8s").
_PROGRAM_NAME = re.compile(r"[-.]|\d\Z")
# A program's name ("pip-audit", "mkdocs", "./bin/tool") and an option after it.
_OPTIONED_PROGRAM = re.compile(r"(?:\./)?[a-z][\w.+/-]*(?:[ \t]+[a-z][\w-]*)*[ \t]+-{1,2}\w")
# A program a task starts a session of ("start a Python REPL", "open a psql session",
# "in a node REPL"): the word before REPL, session, shell, console or prompt, after a
# word of starting one or "in a" — the program's name, in lowercase.
_SESSION = re.compile(
    r"\b(?:(?:start|starts|starting|launch|launching|open|opening|run|running|fire[ \t]+up"
    r"|spin[ \t]+up)[ \t]+(?:(?:a|an|the)[ \t]+)?|in[ \t]+an?[ \t]+)(?:new[ \t]+)?+"
    r"(?:interactive[ \t]+)?+(?P<program>[A-Za-z][\w.+-]*)[ \t]+(?:repl|session|shell)\b",
    re.I,
)
# A task that starts with a command ("npm install axios --save", "pytest -x tests/unit
# and tell me what fails", "please ls -la src"): a program's line up to a comma, a
# sentence's end or a word that goes on to something else (`_LEADING_END`).
_LEADING = re.compile(r"\A[ \t]*(?:(?i:please|pls)[ \t,]+)?(?=[a-z])")
# Programs that show or find files, which a task that starts with them asks for ("cat
# package.json for me", "find . -name '*.py'"): a file tool's work, so no command.
_SHOWING = frozenset({"cat", "head", "find", "less", "more"})
# Programs a shell knows by these names, none of them a word a task would write after
# "using" or "with" for something else (`_WORDLIKE_PROGRAMS` are).
_SHELL_PROGRAMS = frozenset(
    {"docker", "git", "ls", "dir", "echo", "grep", "findstr", "ps", "taskkill", "tasklist"}
    | {"netsh", "ipconfig", "ifconfig", "ping", "curl", "wget", "python3", "pip", "npm"}
    | {"npx", "kubectl", "shutdown", "mkdir", "rmdir", "rm", "del", "cp", "mv", "cd", "pwd"}
    | {"whoami", "hostname", "systeminfo", "chmod", "chown", "unzip", "ssh", "scp", "javac"}
    | {"gcc", "df", "du", "uname", "wc", "sed", "awk", "powershell", "cmd", "bash", "tracert"}
    | {"traceroute", "nslookup", "netstat", "xcopy", "robocopy", "schtasks", "wmic"}
    | {"lsof", "pytest", "ruff", "mypy", "tar", "gzip", "tail", "pnpm", "rustc"}
)
# Programs whose names are English words too ("I'm using python to build a web app",
# "use find to locate it", "make a branch", "the run time"): one only with an option or
# a path after it ("with cargo build --release", "using python3 -m venv").
_WORDLIKE_PROGRAMS = frozenset(
    {"python", "node", "cargo", "make", "go", "yarn", "cat", "find", "time", "start", "head"}
    | {"env"}
)
# Subcommands of the programs that take one ("npm run dev", "docker compose up", "cargo
# build", "go test"): after a program's name they make what follows a command, not prose
# ("with npm run dev"; not "deal with git problems").
_SUBCOMMANDS = words(
    """run install ci start test build exec compose ps logs get apply describe up down
    restart stop status log diff add commit push pull fetch clone init list show
    uninstall update upgrade freeze check fmt clippy vet tidy lint serve dev publish"""
)
_RUNNING = frozenset({"time", "env"})  # programs that run another: "time make"
_SUBCOMMANDED = frozenset({"cargo", "go", "yarn", "make"})  # word-like ones that take one
# An option ("-sh", "--release", "--out=x"), a path ("./build.sh", "src\\app", "main.c",
# "."), not a version ("3.12", "18.x"), or a package pinned to one ("requests==2.31.0",
# "axios@1.6.2", "numpy>=1.24").
_OPTION_OR_PATH = re.compile(
    r"-{1,2}\w[\w-]*(?:=\S*)?|\S*[/\\]\S*|\.{1,2}|(?!\d+\.)[\w-]+\.[A-Za-z]\w*"
    r"|[\w.-]+(?:[=<>~!]=|@)[\^~]?\d[\w.*-]*"
)
_NO_PROGRAM = frozenset({"line", "prompt", "output", "result", "history", "name", "below"})
# Words that say which command, not what it runs: "run the following command", "use the
# same command", "the default command".
_WHICH = frozenset(
    {"following", "same", "above", "previous", "default", "appropriate", "new", "specified"}
    | {"right", "correct", "proper", "given", "exact", "necessary", "relevant", "required"}
    | {"last", "next", "first", "original", "custom", "shell", "terminal", "system", "help"}
)
# What joins one command to the next, cut off the first: a comma or a conjunction, then
# words leading to "command" ("ls, then the command pwd", "echo hi and run the command
# date"); "echo a command ls" keeps its "a".
_JOINING = re.compile(
    r"(?:[ \t]*[,;]|[ \t]+(?:and|or|then|also|next|finally|after|afterwards|with|plus"
    r"|followed[ \t]+by|as[ \t]+well[ \t]+as)\b)"
    r"(?:[ \t,;]+(?:and|then|also|next|finally|after|afterwards|that|run|use|using"
    r"|execute|with|the|a|an)\b)*[ \t,;]*\Z",
    re.I,
)
_LEADING_END = re.compile(rf"[,;\n]|{_COMMAND_END.pattern}|[ \t]+{_GOES_ON}\b")
# What ends a command's sentence ("ls -la ./src.", "echo hi..."), not a directory of its
# own ("cd ..", "ls .").
_LAST_STOP = re.compile(r"(?<![\s/.])\.+\Z|[?!]+\Z")
_NOT_PROGRAMS = STOP_WORDS | _NO_PROGRAM
_NOT_COMMANDS = _NOT_PROGRAMS | _WHICH  # the first word before "command"
# Words before "session" or "shell" that are no program's name ("a chat session").
_NOT_SESSION_PROGRAMS = (
    _NOT_PROGRAMS
    | _WHICH
    | frozenset({"terminal", "remote", "separate", "debug", "debugging", "login", "current"})
    | frozenset({"fresh", "browser", "admin", "command", "chat", "interactive", "user", "work"})
)
_LONGEST_COMMAND = 500  # characters: a task's commands are short, its text may not be
_MOST_COMMANDS = 8


def given_commands(text: str, original: str) -> list[str]:
    """The commands `text` (`original` with its quoted strings blanked: a marker inside
    quotes is none) gives after the word "command" ("using the command echo hi") or
    before it ("using the echo hi command"; not "the exact command shutdown /s", whose
    command comes after), or, for a program shells know, after a word of using it alone
    ("using docker --version", "with du -sh": `_programs_used`), quoted after one, the
    task's own first line, or the program it starts a session of (`_session_programs`),
    in the task's order, as `original` writes them (a session's program in lowercase)."""
    written = _quoted_commands(original) + _leading_command(text, original)
    written += _session_programs(text)
    used = _programs_used(text)
    if "ommand" not in text and not used:
        return [command for _, command in sorted(written)][:_MOST_COMMANDS]
    markers = [m for m in _COMMAND.finditer(text) if m["program"].lower() not in _NOT_PROGRAMS]
    after = {m.start() for m in markers}
    named = [
        m
        for m in _COMMAND_BEFORE.finditer(text)
        if _a_command(m["command"]) and m.end() - len("command") not in after
    ]
    named = (named + used)[:_MOST_COMMANDS]
    markers = [m for m in markers if not any(n.start() <= m.start() < n.end() for n in named)]
    found = [
        (m.start(), _LAST_STOP.sub("", original[m.start("command") : m.end("command")]))
        for m in named
    ]
    bounds = sorted([m.start() for m in markers[:_MOST_COMMANDS]] + [m.start() for m in named])
    for match in markers[:_MOST_COMMANDS]:
        start = match.start("program")
        following = next((bound for bound in bounds if bound > start), None)
        end = start + _LONGEST_COMMAND if following is None else following
        rest = original[start : min(end, start + _LONGEST_COMMAND)].split("\n", 1)[0]
        said = _COMMAND_END.split(rest, maxsplit=1)[0]
        if following is not None:
            said = _JOINING.sub("", said)
        found.append((match.start(), _LAST_STOP.sub("", said.rstrip(" \t"))))
    return [command for _, command in sorted(found + written)][:_MOST_COMMANDS]


def _quoted_commands(task: str) -> list[tuple[int, str]]:
    """The quoted commands of `task` after a word of running them ("run `pytest -x`"),
    by where each starts: what a quote holds that is a program's line (strictly after
    "with": "with 'ls -la'", not "with 'grep the logs'"), or in backticks a program's
    name with an option ("with `mkdocs build --strict`"); never what a task replaces
    something with ("replace `a` with `npm install -g b`")."""
    found: list[tuple[int, str]] = []
    for match in QUOTED.finditer(task):
        before = task[max(0, match.start() - _BEFORE_QUOTE) : match.start()]
        marker = _RUN_BEFORE.search(before)
        held = quote(match, task).strip()
        strict = marker is not None and marker["marker"].lower() == "with"
        if strict and _REPLACED_WITH.search(_clause_before(task, match.start())):
            continue
        coded = match[CODE] is not None and _optioned_program(held)
        if marker is not None and held and (_a_command_line(held, strict=strict) or coded):
            found.append((match.start(), held))
            if len(found) == _MOST_COMMANDS:
                break
    return found


def _session_programs(text: str) -> list[tuple[int, str]]:
    """The programs `text` starts a session of (`_SESSION`), by where each is named."""
    found = []
    for match in _SESSION.finditer(text):
        program = match["program"].lower()
        if program not in _NOT_SESSION_PROGRAMS:
            found.append((match.start("program"), program))
    return found


def _clause_before(task: str, place: int) -> str:
    """The clause of `task` up to `place`: from the last sentence's end or semicolon
    before it, at most _LONGEST_COMMAND characters back."""
    start = max(0, place - _LONGEST_COMMAND)
    ends = list(_CLAUSE_BREAK.finditer(task, start, place))
    return task[ends[-1].end() if ends else start : place]


def _optioned_program(command: str) -> bool:
    """Whether `command` is a program's name, perhaps subcommands, then an option
    ("mkdocs build --strict", "pip-audit -r requirements.txt"), whichever program."""
    found = _OPTIONED_PROGRAM.match(command)
    return found is not None and command.split(maxsplit=1)[0].lower() not in _NOT_PROGRAMS


def _leading_command(text: str, original: str) -> list[tuple[int, str]]:
    """The command `original` starts with (`text`: its quotes blanked), if it starts with
    a program's line, strictly (every word after the program a subcommand, an option or
    a path), its first word one of those or the program the whole task ("npm install
    axios@1.6.2 --save", "ls -la src", "ls"; not "make sure …", "grep the logs …", "grep
    for TODO …", "npm install the deps", "git push origin main", nor "cat package.json
    for me", which asks to see a file)."""
    start = _LEADING.match(text)
    if start is None:
        return []
    bound = _LEADING_END.search(text, start.end(), start.end() + _LONGEST_COMMAND)
    end = bound.start() if bound is not None else min(len(text), start.end() + _LONGEST_COMMAND)
    line = text[start.end() : end]
    program, *rest = line.split() or [""]
    alone = not rest and not text[end:].strip(" \t.!?")  # "ls", not "grep for TODO …"
    led = alone or (bool(rest) and (rest[0] in _SUBCOMMANDS or _OPTION_OR_PATH.fullmatch(rest[0])))
    if program in _SHOWING or not led or not _a_command_line(line, strict=True):
        return []
    return [(start.end(), _LAST_STOP.sub("", original[start.end() : end].rstrip(" \t")))]


def _programs_used(text: str) -> list[re.Match[str]]:
    """The programs a task uses by name (`_PROGRAM_USED`), each with what it runs; a
    phrase that names no program ("run the linter") leaves the words after it to the
    next ("with ruff check .")."""
    found = []
    place = 0
    while (match := _PROGRAM_USED.search(text, place)) is not None:
        if _a_program(match):
            found.append(match)
            place = match.end()
        else:
            place = match.start("command")
    return found


def _a_program(match: re.Match[str]) -> bool:
    """A program a shell knows, given alone, with an option or a path, with subcommands
    only ("with npm run dev"; not "errors with npm install failing"), or (but after
    "with": "deal with ssh keys") with words; a word-like one with an option or a path,
    subcommands where it takes them ("with cargo build"), or, for one that runs another,
    that program ("with time make"); after "run" or "execute", any program whose name no
    word has (a hyphen or a dot in it, or a digit at its end) with an option ("run
    pip-audit -r requirements.txt", "run python3 -m venv .venv"; not "run the tests -k
    login", "run the e2e tests -k login")."""
    marker = match["marker"].lower()
    named = _PROGRAM_NAME.search(match["program"]) is not None
    if marker in ("run", "execute") and named and _optioned_program(match["command"]):
        return True
    return _a_command_line(match["command"], strict=marker == "with")


def _a_command_line(command: str, *, strict: bool) -> bool:
    """Whether `command` is a program's command line (`_a_program`); if `strict`, a
    program a shell knows takes no words but subcommands, options and paths."""
    program, *rest = command.split()
    optioned = any(_OPTION_OR_PATH.fullmatch(word) for word in rest)
    first, *tail = rest or [""]
    known_tail = all(word in _SUBCOMMANDS or _OPTION_OR_PATH.fullmatch(word) for word in tail)
    subcommanded = first in _SUBCOMMANDS and known_tail
    running = program in _RUNNING and first in _SHELL_PROGRAMS | _WORDLIKE_PROGRAMS
    if program in _WORDLIKE_PROGRAMS:
        return optioned or (running and known_tail) or (program in _SUBCOMMANDED and subcommanded)
    if program not in _SHELL_PROGRAMS:
        return False
    return optioned or subcommanded or not rest or not strict


def _a_command(words: str) -> bool:
    """Whether the words before "command" are a command: a program, then no stop word
    ("echo %date%", not "help of the grep" or "following")."""
    program, *rest = words.split()
    return program not in _NOT_COMMANDS and not set(rest) & STOP_WORDS
