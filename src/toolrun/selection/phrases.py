"""Phrases of a task that hold one value whole, for step 5 (`facts`): text the task says to
take as written ("with the following words verbatim: go for shopping"), street addresses
("221B Baker Street, Berkeley, CA, USA") and items with their counts ("five burgers and
six chicken wings"). Each finder takes text whose quoted strings are blanked out where a
quote must win, and returns the spans (or values) it found."""

from __future__ import annotations

import re
from itertools import islice

from toolrun.selection.languages import NAMES_PATTERN as LANGUAGE_NAMES
from toolrun.selection.places import gazetteer
from toolrun.selection.quotes import QUOTED, quote
from toolrun.selection.text import NUMBER_WORDS, STOP_WORDS, words

# Text to take as written, after a marker and a colon or dash: "with the following words
# verbatim: go for shopping", "with content - go to gym", "saying: see you at 6". Without
# the colon or dash the marker is prose ("quote it verbatim from chapter 3", "pages with
# content about Python"); a quote right after it is the quote's. It runs to the end of
# its sentence or line.
_VERBATIM = re.compile(
    r"(?:\b(?:verbatim|word for word|saying|that says|with (?:the )?content)"
    r"|\bwith (?:the )?(?:following )?(?:words|text|wording))(?:[ \t]+verbatim)?"
    r"[ \t]*(?:[:\u2013\u2014]|-(?=[ \t]))(?P<gap>[ \t]*)(?P<text>\w[^\n]*)",
    re.I,
)
# … and without the colon, "with content" and the rest of a task's last sentence ("add
# a todo with content go to sleep at 9 pm"), up to no comma (what follows one may be
# another value: "…, priority 2"; a polite end is none: "…, please"), unless a
# preposition, a linking word or a word of a filter follows it ("with content about
# Python", "with content longer than 100 words", "with content rating PG-13").
_NOT_CONTENT = (
    "about|on|onto|of|from|in|into|for|like|related|regarding|that|which|such|including"
    "|to|and|or|as|is|was|by|at|than|over|under|longer|shorter|more|less|greater|fewer"
    "|larger|smaller|rating|ratings|type|types|length|size|filter|matching|containing"
    "|similar|warning|warnings|written"
)
_CONTENT_TO_END = re.compile(
    rf"\bwith (?:the )?content[ \t]+(?!(?:{_NOT_CONTENT})\b)(?P<text>\w[^\n,]*)\Z", re.I
)
# A polite end, no value: "…, please", "…, thanks!".
_POLITE_END = re.compile(r",[ \t]*(?:please|thanks|thank you|thx|pls)[ \t.!]*\Z", re.I)
_POLITE_TAIL = 30  # characters: where a polite end may start
_MAYBE_VERBATIM = re.compile(r"verbatim|word|saying|says|content|text|translat|here", re.I)
# Text a task gives as what it hands over ("Sure, here is the answer to the question:\n\n
# **Logistic regression is …**"): after the colon, a line break (or a written "\n") or
# bold marks — a paragraph of its own, not "here is the result: 42. Is it prime?" —,
# then to the end of its paragraph.
_HERE_IS = re.compile(
    r"\bhere(?:'s|\u2019s|[ \t]+is)[ \t]+(?:the|my|an?)[ \t]+"
    r"(?:answer|response|reply|summary|result|output)(?:[ \t]+(?:to|for|of)[ \t]+[^:\n]{1,40})?"
    r"[ \t]*:[ \t]*(?:\n|\\n|\*\*)(?:\s|\\n|\*)*(?P<text>\w(?:[^\n\\]|\\(?!n))*)",
    re.I,
)
# What to translate: "Translate Hello, how are you? from English to French", "translate
# the phrase good morning into German" (up to the languages, as written; a quoted one
# is the quote's). Not what says which text ("this", "the document at /docs/a.txt",
# "my report.pdf", "3 pages"): its values are other parameters'. Its end is found
# once (the text ends in no space, the spaces after it are read whole) and within 300
# characters: linear.
_LONGEST_TO_TRANSLATE = 300
_QUOTES = frozenset("\"'`\u2018\u2019\u201c\u201d")
_TRANSLATE = re.compile(
    r"\btranslate[ \t]+(?:the[ \t]+(?:text|phrase|sentence|word|words)[ \t]+)?"
    r"(?!(?:this|that|it|these|those|them|something|the|my|our|your|his|her|their|an?)\b|\d)"
    rf"(?P<text>\w(?:[^\n]{{0,{_LONGEST_TO_TRANSLATE}}}?\S)?)[ \t]++"
    rf"(?:from[ \t]++(?:{LANGUAGE_NAMES})[ \t]++)?(?:to|into)[ \t]++(?:{LANGUAGE_NAMES})\b",
    re.I,
)
# A sentence's end: not after an abbreviation ("Dr.", "p.m.", "e.g.") or a lone letter.
_NOT_AN_END = (
    r"\\n|(?<!\bDr)(?<!\bMr)(?<!\bMs)(?<!\bSt)(?<!\bJr)(?<!\bSr)(?<!\bvs)(?<!\bMrs)(?<!\betc)"
    r"(?<!\b[A-Za-z])"
)
_TEXT_END = re.compile(rf"{_NOT_AN_END}[.!?](?=\s|$)")
# … and a command's, not a directory either: "." after a space ("ls ."), ".." after one
# or a "/" ("cd ..", "cd ../.."); "ls /tmp/." ends at its last ".".
_COMMAND_END = re.compile(rf"{_NOT_AN_END}(?:(?<!\s)(?<![\s/]\.)\.|[!?])(?=\s|$)")


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
# A task that starts with a command ("npm install axios --save", "pytest -x tests/unit
# and tell me what fails", "please ls -la src"): a program's line up to a comma, a
# sentence's end or a word that goes on to something else (`_LEADING_END`).
_LEADING = re.compile(r"\A[ \t]*(?:(?i:please|pls)[ \t,]+)?(?=[a-z])")
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
# An option ("-sh", "--release", "--out=x") or a path ("./build.sh", "src\\app", "main.c",
# "."), not a version ("3.12", "18.x").
_OPTION_OR_PATH = re.compile(
    r"-{1,2}\w[\w-]*(?:=\S*)?|\S*[/\\]\S*|\.{1,2}|(?!\d+\.)[\w-]+\.[A-Za-z]\w*"
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
_LONGEST_COMMAND = 500  # characters: a task's commands are short, its text may not be
_MOST_COMMANDS = 8


# A sports season by its year or years, written up to three words before "season" ("the
# 2019-2020 season", "the 2021 La Liga season", "NBA 2021 regular season").
_SEASON = re.compile(
    r"(?<![\w/-])((?:19|20)\d\d(?:[-/](?:(?:19|20)\d\d|\d\d))?)(?![\w/-])"
    r"(?:[ \t]+[\w.'\u2019-]+){0,3}?[ \t]+season\b",
    re.I,
)


def played(text: str) -> list[str]:
    """What a task asks to play, as written: "wrecking ball" of "play wrecking ball by
    Miley Cyrus", "Johnny Johnny Yes papa" of "play Johnny Johnny Yes papa"; not a quote
    (a quote's own), "the song…" nor "playing"."""
    return [m["title"] for m in _PLAYED.finditer(text)]


def seasons(text: str) -> list[str]:
    """The seasons `text` names by their years, as written ("2019-2020", "2021")."""
    if "eason" not in text:
        return []
    return [match[1] for match in _SEASON.finditer(text)]


def commands(text: str, original: str) -> list[str]:
    """The commands `text` (`original` with its quoted strings blanked: a marker inside
    quotes is none) gives after the word "command" ("using the command echo hi") or
    before it ("using the echo hi command"; not "the exact command shutdown /s", whose
    command comes after), or, for a program shells know, after a word of using it alone
    ("using docker --version", "with du -sh": `_programs_used`), in the task's order, as
    `original` writes them."""
    written = _quoted_commands(original) + _leading_command(text, original)
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
    "with": "with 'ls -la'", not "with 'grep the logs'")."""
    found = []
    for match in islice(QUOTED.finditer(task), _MOST_COMMANDS):
        marker = _RUN_BEFORE.search(task, max(0, match.start() - _BEFORE_QUOTE), match.start())
        held = quote(match, task).strip()
        strict = marker is not None and marker["marker"].lower() == "with"
        if marker is not None and held and _a_command_line(held, strict=strict):
            found.append((match.start(), held))
    return found


def _leading_command(text: str, original: str) -> list[tuple[int, str]]:
    """The command `original` starts with (`text`: its quotes blanked), if it starts with
    a program's line, strictly, its first word after the program a subcommand, an option
    or a path ("npm install axios --save", "ls -la src"; not "make sure …", "grep the
    logs …", "find every yaml file under deploy/", "git push origin main")."""
    start = _LEADING.match(text)
    if start is None:
        return []
    bound = _LEADING_END.search(text, start.end(), start.end() + _LONGEST_COMMAND)
    end = bound.start() if bound is not None else min(len(text), start.end() + _LONGEST_COMMAND)
    line = text[start.end() : end]
    _program, *rest = line.split() or [""]
    led = not rest or rest[0] in _SUBCOMMANDS or bool(_OPTION_OR_PATH.fullmatch(rest[0]))
    if not line.strip() or not led or not _a_command_line(line, strict=True):
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
    that program ("with time make")."""
    return _a_command_line(match["command"], strict=match["marker"].lower() == "with")


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


def verbatim_spans(text: str, original: str) -> list[tuple[int, int]]:
    """Where `text` (`original` with its quoted strings blanked: a marker inside quotes
    is none) holds text to take as written."""
    if not _MAYBE_VERBATIM.search(text):
        return []
    spans = [
        match.span("text")
        for match in _TRANSLATE.finditer(text)
        if not _QUOTES.intersection(original[match.start() : match.start("text")])
    ]
    for match in _HERE_IS.finditer(text):
        start = match.start("text")
        spans.append((start, start + len(original[start : match.end()].rstrip(" \t*"))))
    for match in _VERBATIM.finditer(text):
        if original[match.start("gap") : match.end("gap")].strip(" \t"):
            continue  # a quoted string right after the marker: the quote's
        start = match.start("text")
        cut = len(_TEXT_END.split(match["text"], maxsplit=1)[0])
        said = original[start : start + cut].rstrip(" \t.")  # its quotes kept: 'said "hi"'
        if said:
            spans.append((start, start + len(said)))
    end = len(original.rstrip(" \t\n.!?"))
    if polite := _POLITE_END.search(original, max(end - _POLITE_TAIL, 0), end):
        end = polite.start()
    last = _CONTENT_TO_END.search(text[:end])
    if not spans and last and len(_TEXT_END.split(last["text"], maxsplit=1)) == 1:
        spans.append(last.span("text"))
    return _apart(spans)


def _apart(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` in order, each that overlaps one before it left out ("Translate the text
    verbatim: hello there into French" is one text)."""
    kept: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end))
    return kept


# A street address: a house number, the street's capitalised name and its kind; then,
# after commas, what is known as a place (a city, a state, a country) or a postcode.
_STREET_KINDS = (
    "Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Way|Court|Ct|Place|Pl"
    "|Terrace|Parkway|Pkwy|Highway|Hwy|Square|Sq"
)
_STREET = re.compile(
    rf"(?<![\w.-])\d+[A-Za-z]?(?:[ \t]+[A-Z][\w'\u2019-]*)+?[ \t]+(?:{_STREET_KINDS})\b\.?"
)
_STREET_KIND = re.compile(rf"\b(?:{_STREET_KINDS})\b")
_HOUSE_NUMBER = re.compile(r"\d[A-Za-z]?[ \t]+[A-Z]")
_FOLLOWING = re.compile(r",[ \t]*([A-Z][\w'\u2019-]*(?:[ \t]+[A-Z][\w'\u2019-]*)*)")
_POSTCODE = re.compile(r"[ \t]+(?:\d{4,5}(?:-\d{4})?|\d[A-Z]{2})\b")  # 94704, 2AA of SW1A 2AA
_RANKING = re.compile(r"\b(?:top|best|first|last|most|over|under)[ \t]+$", re.I)
_NEXT_WORD = re.compile(r"[ \t]+([A-Za-z]+)")


def address_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds street addresses. Not a ranking or a name ("top 3 Main Street
    restaurants", "5 Wall Street Journal headlines": a count before a street's name, a
    noun or another name right after it)."""
    if not (_HOUSE_NUMBER.search(text) and _STREET_KIND.search(text)):
        return []
    spans = []
    for match in _STREET.finditer(text):
        end = _places_after(text, match.end())
        after = _NEXT_WORD.match(text, end)
        ranked = _RANKING.search(text, max(match.start() - 12, 0), match.start()) is not None
        named = after is not None and after[1].lower() not in STOP_WORDS
        if ranked or (end == match.end() and named):
            continue
        spans.append((match.start(), end))
    return spans


def _places_after(text: str, end: int) -> int:
    """Where an address ending at `end` ends with the places after it (", Berkeley, CA,
    USA 94704"): each known to the gazetteer (or its first word: "London SW1A 2AA"), with
    its postcode."""
    places = gazetteer()
    while following := _FOLLOWING.match(text, end):
        name = following[1]
        if not (places.knows(name) or places.knows(name.split()[0])):
            break
        end = following.end()
        if postcode := _POSTCODE.match(text, end):
            end = postcode.end()
    return end


# What a task asks to play: "play" first in a sentence or asked ("please play", "can you
# play"), up to "by" (its maker), "on", "from", a stop or the end; at most eight words;
# not a game or a sport ("play chess").
_PLAYED = re.compile(
    r"(?:^|(?<=[.!?]\s)|(?<=\bplease\s)|(?<=\bcan you\s)|(?<=\bcould you\s))play\s+"
    r"(?!(?:the|a|an|some|me|my|it|this|that|by|on|from|in|using|with|nice|along|fair)\b)"
    r"(?!(?:chess|cards|games?|sports?|football|soccer|basketball|tennis|golf|poker)\b)"
    r"(?P<title>[A-Za-z0-9][\w'-]*(?:\s+(?!(?:by|on|from|in|using|with)\b)[\w'-]+){0,7})"
    r"(?=\s+(?:by|on|from|in|using|with)\b|\s*[.,!?]|\s*$)",
    re.I,
)
# Items each with its count, written as one list: "five burgers and six chicken wings",
# "10 'Big Macs', 2 colas". An item is quoted, or one or two lowercase words that are not
# a unit or a kind of guest (days, nights, inches, adults...): those count a measure.
_COUNT = r"(?<![\d.,])(?:\d+|one|an?|" + "|".join(NUMBER_WORDS) + r")(?![\d.,]\d)"
_ITEM = r"(?:'[^'\n]+'|\"[^\"\n]+\"|[a-z][a-z-]*(?:[ \t](?!and\b|or\b)[a-z][a-z-]*)?)"
_COUNTED_ONE = re.compile(rf"\b(?P<count>{_COUNT})[ \t]+(?P<item>{_ITEM})", re.I)
_COUNTED = re.compile(
    rf"\b{_COUNT}[ \t]+{_ITEM}(?:(?:,[ \t]*(?:and[ \t]+)?|[ \t]+and[ \t]+){_COUNT}[ \t]+{_ITEM})+",
    re.I,
)
# One item a task orders: "buy a pizza", "order two 'Big Macs'".
_ORDERED_ONE = re.compile(rf"\b(?:order|buy|purchase)[ \t]+{_COUNTED_ONE.pattern}", re.I)
_ITEM_AFTER = re.compile(rf"[ \t]+({_ITEM})")
_AMOUNTS = frozenset({"lot", "lots", "bunch", "couple", "few", "number", "share", "shares"})
MEASURES = words(
    """second seconds minute minutes hour hours day days night nights week weeks month months
    year years time times foot feet inch inches mile miles meter meters metre metres km kg
    gram grams pound pounds lb lbs ounce ounces cup cups tablespoon tablespoons teaspoon
    teaspoons liter liters litre litres percent point points unit units dozen adult adults
    child children kid kids guest guests people person persons room rooms bed beds am pm
    sec secs min mins hr hrs x"""
)


def counted(text: str) -> tuple[list[list[str]], list[list[int]]]:
    """Items written with their counts as one list, and the counts: (["burgers", "chicken
    wings"], [5, 6]) of "five burgers and six chicken wings". An item's trailing stop
    words are not its own; a list with a measure, or one item twice, counts no items.
    Where the task writes no list that counts items, the one item it orders ("buy a
    pizza")."""
    if " and " not in text and "," not in text:
        return _ordered(text)
    items: list[list[str]] = []
    counts: list[list[int]] = []
    for match in _COUNTED.finditer(text):
        pairs = []
        for one in _COUNTED_ONE.finditer(match[0]):
            pairs.append((" ".join(_item_words(one["item"])), _count(one["count"])))
        named = [item for item, _ in pairs]
        measured = any(set(item.lower().split()) & (MEASURES | STOP_WORDS) for item in named)
        if len(set(named)) == len(named) > 1 and not measured:
            items.append(named)
            counts.append([count for _, count in pairs])
    return (items, counts) if items else _ordered(text)


def _ordered(text: str) -> tuple[list[list[str]], list[list[int]]]:
    """The one item a task orders, with its count: (["pizza"], [1]) of "buy a pizza",
    (["burger"], [1]) of "order a burger with no onions", (["olive oil"], [3]) of "buy
    three bottles of olive oil"; none of a measure ("order 3 days of…") or an amount
    ("buy a lot of apples")."""
    found = _ORDERED_ONE.search(text)
    if found is None:
        return [], []
    item = _item_words(found["item"])
    held = found["item"].split()[-1:] == ["of"] and _ITEM_AFTER.match(text, found.end())
    said = {w.lower() for w in item}
    if not item or said & (MEASURES | STOP_WORDS | _AMOUNTS):
        return [], []
    if held and (contents := [w for w in _item_words(held[1]) if w.lower() not in STOP_WORDS]):
        item = contents  # "three bottles of olive oil": olive oil
    return [[" ".join(item)]], [[_count(found["count"])]]


def _item_words(written: str) -> list[str]:
    """An item's words, without quotes or trailing stop words ("bottles" of "bottles
    of"); none for a quote of blanks."""
    item = written.strip("'\"").split()
    while len(item) > 1 and item[-1].lower() in STOP_WORDS:
        item.pop()
    return item


def _count(word: str) -> int:
    lowered = word.lower()
    if lowered in ("a", "an", "one"):
        return 1
    return NUMBER_WORDS.get(lowered) or int(word)
