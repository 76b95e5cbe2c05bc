"""The values a task's text holds, for step 5: quoted strings, URLs, e-mail addresses,
paths, glob patterns, dates, literal lists and dicts, math expressions, numbers (with the
words around them, scales, percentages, number words, runs like "12, 24, 36"; quoted
ones too), codes (AB1010CD) and IPv4 addresses, identifiers, capitalised names, street
addresses ("221B Baker Street, London"), counted items ("five burgers and six wings"),
a "replace A with B" pair, a "10 to 20" range and text to take as written ("with the
content: go to gym"); and the words just before each string value, which may name its
parameter."""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, fields
from functools import lru_cache
from itertools import pairwise
from typing import Any

from toolrun.selection.commands import given_commands
from toolrun.selection.currencies import Mention, mentions
from toolrun.selection.dates import Clock, Day, clocks, dates
from toolrun.selection.filekinds import BUILD_FILES, FILE_EXTENSIONS
from toolrun.selection.numerals import NEAR_BEFORE, Number, numbers
from toolrun.selection.phrases import address_spans, counted, played, seasons, verbatim_spans
from toolrun.selection.quotes import QUOTED, QUOTES, numbers_written_back, quote, unwrapped
from toolrun.selection.text import ACCIDENTAL, STOP_WORDS, blanked, split_words, stem
from toolrun.selection.unitsizes import unit_of
from toolrun.selection.wordlists import word_lists

_URL = re.compile(r"https?://[^\s\"'<>]+[^\s\"'<>.,;:!?)]")
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
# A path: with a directory ("src/app.py", "~/x", "C:\\y", "deploy/"; not "w/"), a name
# with an extension ("main.py"), a dotfile (".env", ".env.example", ".nvmrc"; not an
# extension: ".yml files", "every .json file") or a build file known by its name alone
# ("Dockerfile", "Makefile").
_PATH = re.compile(
    r"(?<![\w/~.-])(?:~/|[A-Za-z]:[/\\]|\.{0,2}/)?"
    r"(?:(?:[\w.-]+/)+[\w.-]+|(?:[\w.-]+/)*[\w.-]{2,}/(?=[\s,;:!?)]|$))"
    r"|(?<![\w/.-])\.?[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,5}\b"
    rf"|(?<![\w/.*-])\.(?!(?:{FILE_EXTENSIONS})[ \t]+files?\b)[a-z][\w-]*(?:\.[\w-]+)*"
    r"(?![\w-]|\.\w|[ \t]+files\b)"
    rf"|(?<![\w/.-])(?:{BUILD_FILES})file\b(?!\.\w)"
)
# *.md, src/**/*.py, file?.txt; a "?" ending a word ("defined?") asks, it is no wildcard.
_GLOB = re.compile(r"(?<!\S)[\w./-]*(?:\*|\?(?=[\w/*?{-]|\.\w))[\w./*?{},-]*")
_HEADING_AFTER = re.compile(r"(?<=\d)\s*(?:°\s*)?[NSEW]\b")
_PROPER_WORD_END = r"(?![\w'\u2019-])"
_UPPER = "".join(c for c in map(chr, range(0x500)) if c.isupper())
_LETTER = r"[^\W\d_]"
_WORD = rf"[{_UPPER}](?:\.[{_UPPER}])+\.?|[{_UPPER}](?:{_LETTER}|['\u2019-](?={_LETTER}))*"
_TITLE = r"(?:Mr|Mrs|Ms|Dr|Prof|St)\.[ \t]+"
_CONNECTOR = r"[ \t]+(?:(?:of|of the|de|da|del|la|von|van|du|des)[ \t]+)?"
_PROPER = re.compile(
    rf"(?<![\w'\u2019.-])(?:{_TITLE})?(?:{_WORD})(?:{_CONNECTOR}(?:{_WORD}))*{_PROPER_WORD_END}"
)
# A name's first word with what joins it to the next ("Museum of Modern Art": "Museum of ").
_FIRST_WORD = re.compile(rf"(?:{_WORD}){_CONNECTOR}")
# snake_case or camelCase names (parse_args, loadConfig); each word read once
# (possessive): linear on "x_x_x_…_".
_IDENTIFIER = re.compile(
    r"(?<![\w./-])(?:[A-Za-z](?=\w*_)\w*+(?<=[A-Za-z0-9])|[a-z]+[A-Z]\w*+)(?![\w/])"
)
# Letters and digits mixed, a letter first: AB1010CD, rs6034464, Q3CC-CRT3-SZ2G.
# … or digits, letters and digits again: 6E123, 3pak7; or digits and five letters or more
# of both cases mixed, no unit's (6ysSDTNviL; not 5000mAh, 3GHz).
_CODE = re.compile(
    r"(?<![\w./@'\u2019-])"
    r"(?:[A-Za-z][A-Za-z-]*\d|\d+[A-Za-z]+\d|\d++(?=[A-Za-z]{5})(?=[A-Za-z]*?[a-z][A-Z])[A-Za-z]++)"
    r"[A-Za-z0-9-]*(?<!-)"
    r"(?![\w/@'\u2019-])"
)
# 3x^2 + 2x - 1, y = x**3: terms in x, y or z with an operator, a power or a coefficient.
_TERM = (
    r"(?:\d+(?:\.\d+)?\*?)?(?<![^\W\d_])[xyz](?:\s*(?:\^|\*\*)\s*\d+)?(?![^\W_])"
    r"|\d+(?:\.\d+)?(?!\w|\.\d)"
)
_EXPRESSION = re.compile(rf"(?<![\w^*.])(?:{_TERM})(?:\s*[-+*/]\s*(?:{_TERM}))*")
# [1, 2, 3], ['Sam', 'Alice'], (3, 4): a literal list of numbers or quoted strings.
_LITERAL = re.compile(
    r"\[\s*(?:-?\d[\d.]*|'[^'\[\]]*'|\"[^\"\[\]]*\")(?:\s*,\s*(?:-?\d[\d.]*|'[^'\[\]]*'|"
    r"\"[^\"\[\]]*\"))*\s*\]|\(\s*-?\d[\d.]*(?:\s*,\s*-?\d[\d.]*)+\s*\)"
)
# An IPv4 address (192.168.77.71; not a network, 192.168.0.0/24, which is read as a
# path, nor money with dots for thousands, €1.000.000.000).
_IPV4 = re.compile(r"(?<![\w.$€£¥])\d{1,3}(?:\.\d{1,3}){3}(?!\w|\.\d|/)")
_LARGEST_OCTET = 255
_NESTED = re.compile(r"\[\s*(?:\[[^\[\]]*\]\s*,?\s*)+\]")  # [[10, 20], [30, 40]]
_DICT = re.compile(r"\{[^{}]*\}")
_REPLACE = re.compile(
    r"\b(?P<verb>replace|substitute)\s+(?P<old>\"[^\"]+\"|'[^']+'|`[^`]+`|[^\s\"'`]+)\s+"
    r"(?:with|by)\s+(?P<new>\"[^\"]+\"|'[^']+'|`[^`]+`|[^\s\"'`,;]+)",
    re.I,
)
# What a task changes into what without the word "replace" ("change the port from 8000
# to 9000", "rename the variable tmp to buffer", "correct 'adress' to 'address'", "swap
# json for orjson"): a pair too, its words left in the task (each may be a value of its
# own). Read word by word from the verb, up to the sentence's end or 120 characters on.
_CHANGE_VERB = re.compile(
    r"(?<![\w/-])(change|rename|correct|fix|swap|bump|update|raise|lower|increase|decrease)"
    r"(?![\w/-])",
    re.I,
)
_CHANGE_SPAN = 120  # characters after the verb where the old value may start
_QUOTE_SPAN = 200  # characters a quoted value may hold
_CHANGE_WORD = re.compile(
    rf"\"[^\"\n]{{1,{_QUOTE_SPAN}}}\"|'[^'\n]{{1,{_QUOTE_SPAN}}}'"
    rf"|\u201c[^\u201d\n]{{1,{_QUOTE_SPAN}}}\u201d|\u2018[^\u2019\n]{{1,{_QUOTE_SPAN}}}\u2019"
    r"|[^\s\"\u201c\u201d]+"
)
_QUOTE_MARKS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019"}
_TRAILING = ",.;:!?)"  # marks after an unquoted value that are not its own
# The words before an unquoted, unmarked value that say it is one: what code, text or a
# setting calls it ("the variable tmp", "the word adress", "the import of json"), or
# "from" ("from staging to main").
_VALUE_NOUNS = frozenset(
    {"variable", "function", "method", "class", "import", "word", "string", "key", "port"}
    | {"value", "constant", "field", "parameter", "argument", "setting", "flag", "option"}
    | {"typo", "version", "comment", "label", "title", "header", "message", "module"}
    | {"package", "dependency", "tag", "text", "name", "identifier", "from", "of"}
)
_SPANNED = frozenset(  # "lines 10 to 20": a span, not a change
    {"line", "lines", "page", "pages", "row", "rows", "column", "columns", "chapter"}
    | {"chapters", "section", "sections", "item", "items", "step", "steps", "slide", "slides"}
)
_MARKED_VALUE = re.compile(r"[\d_./=-]|[a-z][A-Z]")  # 8000, parse_args, v1.0, x=1, camelCase
# A value and what it should read as, both quoted (`quotes.QUOTED`, backticks too):
# "change the line `timeout = 5` so it reads `timeout = 50`", "it still has `import a`;
# make it `import b`" — the words before the first quote, and those between the two.
_READS_BEFORE = re.compile(
    r"\b(?:change|fix|edit|update|correct|alter|has|says|reads|contains)\s+"
    r"(?:(?:the|this|that)\s+(?:line|text|string|value|setting)\s+)?\Z",
    re.I,
)
_READS_BETWEEN = re.compile(
    r"[\s,;.\u2014\u2013-]*"
    r"(?:so\s+(?:that\s+)?it\s+(?:reads|says)|(?:make|change)\s+it(?:\s+to)?)\s+",
    re.I,
)
_BEFORE_READS = 40  # characters before the first quote where its verb is looked for
_LINE_WORD = re.compile(r"[a-z_][a-z0-9_]*")  # the words of a line edited (`_edited_line`)
_FIRST_WORD_CHANGED = frozenset({"rename", "swap"})  # "rename tmp to buffer"
_RANGE = re.compile(r"\b(\d+)\s*(?:to|-|\u2013|through)\s*(\d+)\b")
_BREAK = re.compile(r"[.!?](?=\W*\s)|[\"“”\u2018\u2019`\n]|(?<!\w)'|'(?!\w)|\\n")
_REPLACING = re.compile(r"replace|substitute", re.I)
_MAYBE_EXPRESSION = re.compile(r"\d\*?[xyz](?![a-z])|[xyz]\s*(?:\^|\*\*|[-+*/])")
_SEPARATOR = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+)")


@dataclass
class Facts:
    """The values a task's text holds, each used once."""

    quoted: list[str]
    urls: list[str]
    paths: list[str]
    patterns: list[str]  # glob patterns
    dates: list[Day]
    numbers: list[Number]
    names: list[str]  # capitalised phrases
    lists: list[list[Any]]  # literal lists
    identifiers: list[str]  # snake_case and camelCase names
    pair: tuple[str, str] | None = None  # "replace A with B"
    range: tuple[int, int] | None = None  # "lines 10 to 20"
    emails: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)  # AB1010CD
    expressions: list[str] = field(default_factory=list)  # 3x**2 + 2x - 1
    objects: list[dict[str, Any]] = field(default_factory=list)  # literal dicts
    groups: list[list[str]] = field(default_factory=list)  # "'Age', 'Income' and 'Sex'"
    words: list[list[str]] = field(default_factory=list)  # "tomatoes and lettuce"
    verbatim: list[str] = field(default_factory=list)  # "with content - go to gym"
    addresses: list[str] = field(default_factory=list)  # "221B Baker Street, London"
    counted: list[list[str]] = field(default_factory=list)  # "five burgers and six wings"
    counts: list[list[int]] = field(default_factory=list)  # … their counts: [5, 6]
    currencies: list[Mention] = field(default_factory=list)  # "150 euros to yen"
    times: list[Clock] = field(default_factory=list)  # "around 14:00": not by a date
    own_name: str | None = None  # "My name is Emily", "Hi, I am Karan": the user's
    commands: list[str] = field(default_factory=list)  # "using the command echo %time%"
    seasons: list[str] = field(default_factory=list)  # "the 2019-2020 season": its years
    played: list[str] = field(default_factory=list)  # "play wrecking ball by…": the title
    whole: str = ""  # the task itself
    used: list[str] = field(default_factory=list)  # values given (lowercase)
    given_places: list[str] = field(default_factory=list)  # names place parameters took
    given_dates: list[Day] = field(default_factory=list)  # dates date parameters took
    coded: dict[str, str] = field(default_factory=dict)  # "Portland, ME": Portland → ME
    places: dict[str, str] = field(default_factory=dict)  # "Boston" → "Boston, MA"
    before: dict[str, list[str]] = field(default_factory=dict)  # a value → stems before it
    after: dict[str, list[str]] = field(default_factory=dict)  # a name → stems after it
    word_after: dict[str, str] = field(default_factory=dict)  # … the first, as written

    @classmethod
    def of(cls, task: str) -> Facts:
        """The facts of `task`, a fresh copy to use up (parsed once per task)."""
        parsed = _parsed(task).__dict__
        fresh = object.__new__(cls)
        fresh.__dict__.update(parsed)
        fresh.__dict__.update({name: list(parsed[name]) for name in _POOLS})
        fresh.__dict__.update({name: [list(i) for i in parsed[name]] for name in _NESTED_POOLS})
        return fresh

    @classmethod
    def _parse(cls, task: str) -> Facts:
        noted = _Notes(task)
        unquoted = _blanked(task, list(QUOTED.finditer(task))) if QUOTES & set(task) else task
        spans = verbatim_spans(unquoted, task)
        commands = given_commands(unquoted, task)  # left in the text: its numbers, paths
        verbatim = [noted(start, task[start:end]) for start, end in spans]
        rest = blanked(task, spans)
        found, rest = _cut(_URL, rest, "://" in rest)
        urls = [noted(m.start(), m[0]) for m in found]
        found, rest = _cut(_EMAIL, rest, "@" in rest)
        emails = [noted(m.start(), m[0]) for m in found]
        spans = address_spans(rest)
        addresses = [noted(start, rest[start:end]) for start, end in spans]
        rest = blanked(rest, spans)
        pair, rest = _pair(rest)
        bracketed = "[" in rest or "(" in rest
        found, rest = _cut(_NESTED, rest, "[" in rest)
        lists = [_literal(m[0]) for m in found]
        found, rest = _cut(_LITERAL, rest, bracketed)
        lists += [_literal(m[0]) for m in found]
        found, rest = _cut(_DICT, rest, "{" in rest, lambda m: isinstance(_evaluated(m[0]), dict))
        objects = [_evaluated(m[0]) for m in found]
        quoted_matches, plain = _cut(QUOTED, rest, bool(QUOTES & set(rest)))
        quoted = [
            noted(m.start(), quote(m, task), _word_next(task, m.end())) for m in quoted_matches
        ]  # a URL's kept
        hosts, plain = _cut(_IPV4, plain, "." in plain, lambda m: _an_address(m[0]))
        days, plain = dates(plain)
        times = clocks(plain)  # their hours and minutes stay numbers too ("hours": 6)
        found, plain = _cut(_GLOB, plain, "*" in plain or "?" in plain)
        patterns = [m[0].rstrip(".,;:?") for m in found]
        found, plain = _cut(
            _EXPRESSION, plain, bool(_MAYBE_EXPRESSION.search(plain)), _is_expression
        )
        expressions = [re.sub(r"\s*\^\s*", "**", m[0]) for m in found]
        found, bare = _cut(_PATH, plain, True, lambda m: _is_path(m[0]))
        paths = [noted(m.start(), m[0]) for m in found]
        found, bare = _cut(
            _IDENTIFIER, bare, True, lambda m: not _unit_after_number(bare, m.start(), m[0])
        )
        identifiers = [noted(m.start(), m[0], _word_next(task, m.end())) for m in found]
        coded, bare = _cut(_CODE, bare, True, lambda m: _is_code(m[0]))
        by_place = sorted([*hosts, *coded], key=lambda m: m.start())  # an IP address is a code
        codes = [noted(m.start(), m[0], _word_next(task, m.end())) for m in by_place]
        with_quoted, quoted_numbers = numbers_written_back(plain, quoted_matches, task)
        found_numbers = numbers(_blanked(with_quoted, coded), quoted_numbers)
        counted_items, counts = counted(rest)
        _, bare = _cut(_HEADING_AFTER, bare, any(n.heading for n in found_numbers))
        names, places, named_groups = _names(bare, noted)
        currencies = mentions(rest)  # not in a URL, an address or text given as written
        said = _word_runs(m.text for m in currencies)
        names = [n for n in names if " ".join(n.lower().split()) not in said]
        lines = _RANGE.search(plain)
        return cls(
            quoted,
            urls,
            paths,
            patterns,
            days,
            found_numbers,
            names,
            [items for items in lists if items],
            identifiers,
            pair,
            (int(lines[1]), int(lines[2])) if lines else None,
            emails=emails,
            codes=codes,
            expressions=expressions,
            objects=objects,
            groups=_groups(
                rest, [(v, m.start(), m.end()) for v, m in zip(quoted, quoted_matches, strict=True)]
            )
            + named_groups,
            places=places,
            before=noted.before,
            after=noted.after,
            word_after=noted.word_after,
            verbatim=verbatim,
            addresses=addresses,
            counted=counted_items,
            counts=counts,
            currencies=currencies,
            times=times,
            own_name=_own_name(bare, names),
            commands=commands,
            seasons=seasons(task),
            played=played(unquoted),
            coded=_coded(task),
            words=word_lists(bare),
            whole=task.strip(),
        )


_NESTED_POOLS = [f.name for f in fields(Facts) if f.type.startswith("list[list")]
_POOLS = [
    f.name for f in fields(Facts) if f.type.startswith("list[") and f.name not in _NESTED_POOLS
]


@lru_cache(maxsize=256)
def _parsed(task: str) -> Facts:
    return Facts._parse(unwrapped(task))


@dataclass
class _Notes:
    """The words just before each value of a task, and just after each name, quote,
    identifier and code."""

    task: str
    before: dict[str, list[str]] = field(default_factory=dict)
    after: dict[str, list[str]] = field(default_factory=dict)
    word_after: dict[str, str] = field(default_factory=dict)

    def __call__(self, place: int, value: str, end: int | None = None) -> str:
        """`value`, the words just before `place` noted as those before it (and those
        just after `end` as those after it, the first as written too)."""
        self.before.setdefault(value, words_before(self.task, place))
        if end is not None:
            self.after.setdefault(value, words_after(self.task, end))
            written = _WRITTEN_NEXT.match(self.task, end)
            self.word_after.setdefault(value, written[1].lower() if written else "")
        return value


def _an_address(text: str) -> bool:
    return all(int(part) <= _LARGEST_OCTET for part in text.split("."))


def words_before(text: str, place: int) -> list[str]:
    """The stems of the (at most NEAR_BEFORE) words before `place` in its sentence (or
    since a quote), nearest last; not those of an aside in parentheses ("SNP (Single
    Nucleotide Polymorphism) ID rs6034464": "snp", "id")."""
    since = _BREAK.split(text[max(place - 60, 0) : place])[-1]
    return [stem(w) for w in split_words(_ASIDE.sub(" ", since))[-NEAR_BEFORE:]]


_ASIDE = re.compile(r"\([^()]*\)")


NEAR_AFTER_NAME = 3  # words after a name that may say what it is ("as the director")


def _word_next(text: str, end: int) -> int | None:
    """`end`, where a word comes right after it ("'SHAP' method"); None after a comma or
    a stop ("'admin', password")."""
    return end if _WORD_NEXT.match(text, end) else None


def words_after(text: str, place: int) -> list[str]:
    """The stems of the (at most NEAR_AFTER_NAME) words after `place` in its sentence."""
    until = _BREAK.split(text[place : place + 40])[0]
    return [stem(w) for w in split_words(until)[:NEAR_AFTER_NAME]]


_WORD_NEXT = re.compile(r"[ \t]+[A-Za-z]")
_WRITTEN_NEXT = re.compile(r"['\"\u2019\u201d`]?[ \t]+([A-Za-z]+)")  # past a closing quote
_CODE_AFTER = re.compile(r",[ \t]*([A-Z]{2})\b")
_NAME_BEFORE = re.compile(r"[A-Z][\w'\u2019-]*(?:[ \t]+[A-Z][\w'\u2019-]*)*$")


def _coded(text: str) -> dict[str, str]:
    """The names followed by a comma and two capitals ("Portland, ME"), each with them."""
    found: dict[str, str] = {}
    if "," not in text:
        return found
    for code in _CODE_AFTER.finditer(text):
        if name := _NAME_BEFORE.search(text, max(code.start() - 60, 0), code.start()):
            found.setdefault(name[0], code[1])
    return found


def urls(text: str) -> list[str]:
    """The http(s) URLs in `text`."""
    return list(_URL.findall(text))


def file_paths(text: str) -> list[str]:
    """The file paths in `text` (``src/app.py``, ``notes.md``; not ``3.5``), URLs aside."""
    return [p for p in _PATH.findall(_URL.sub(" ", text)) if _is_path(p)]


def without_values(task: str, keep: Collection[str] = ()) -> str:
    """`task` without the values it holds (URLs, glob patterns, paths, literal lists,
    identifiers but those in `keep`, what to replace with what): words about what to do
    are left for matching, values for the arguments."""
    rest = _REPLACE.sub(lambda found: found["verb"], _URL.sub(" ", task))
    rest = _LITERAL.sub(" ", _GLOB.sub(" ", rest))
    rest = _IDENTIFIER.sub(lambda found: found[0] if found[0] in keep else " ", rest)
    return _PATH.sub(" ", rest)


# A quote mark left of a value taken out ("inside ' '"), not an apostrophe ("what's").
_MARKS = r"[\"'`\u201c\u201d\u2018\u2019]"
_LONE_QUOTE = re.compile(rf"(?<!\w){_MARKS}|{_MARKS}(?!\w)")


def gist(text: str) -> str:
    """What `text` asks, without its values or quoted text ("commit it as 'fix typo'":
    "commit it as"): weighed by meaning against requests made before, a new one is near
    an old one for what both ask, not for a file's name or a message they share. Fewer
    than two words left: the text itself."""
    rest = " ".join(_LONE_QUOTE.sub(" ", QUOTED.sub(" ", without_values(text))).split())
    return rest if len(split_words(rest)) >= 2 else text  # one word says too little


def _is_path(text: str) -> bool:
    """Not a number ("3.5", "1.75m") nor an abbreviation ("D.C")."""
    return not re.fullmatch(
        r"(?=\.?\d)[\d.]+(?:e[-+]?\d+)?[A-Za-z]*|(?:[A-Za-z]\.)+[A-Za-z]?", text
    )


def _is_code(text: str) -> bool:
    """Not an identifier (parse_args) nor a number ("1e9")."""
    return "_" not in text and not re.fullmatch(r"\d+e\d+", text)


def _is_expression(match: re.Match[str]) -> bool:
    """A math expression, not a lone number or letter: a variable with an operator, a
    power or a coefficient."""
    text = match[0]
    return bool(re.search(r"[xyz]", text) and re.search(r"[-+*/^]|\d\*?[xyz]", text))


def _names(text: str, noted: _Notes) -> tuple[list[str], dict[str, str], list[list[str]]]:
    """Capitalised phrases ("Museum of Modern Art", "Käärijä", "McDonald's"), the first
    word of a sentence aside; "Boston, MA" for a name followed by another; and names
    written as one list ("Microsoft and Google")."""
    found: list[tuple[str, int, int]] = []
    for match in _PROPER.finditer(text):
        name, start = match[0], match.start()
        noted_at = start  # where the words before it end: before a label, its label
        if _starts_sentence(text, start) or _unit_after_number(text, start, name):
            # the first word of a sentence, or a unit after a number ("16 GB of RAM")
            if not (first := _FIRST_WORD.match(name)):
                continue
            name, start = name[first.end() :], start + first.end()
        if label := _LABEL.match(name):  # "UUID SUPERFANCY" names SUPERFANCY; "ID" nothing
            name, start = name[label.end() :], start + label.end()
            noted_at = start
        if not _NAME_ENDS.match(text, match.end()):  # "Einstein's theory", "Einstein's 1905"
            name = re.sub(r"['\u2019]s$", "", name)
        end = match.end()
        if len(name) == 1 and (accidental := ACCIDENTAL.match(text, end)):
            name, end = name + accidental[0], accidental.end()  # the note "C#", "F sharp"
        if name and name.lower() not in STOP_WORDS:
            found.append((noted(noted_at, name, end), start, end))
    places = {
        name: f"{name}, {following}"
        for (name, _, end), (following, start, _) in pairwise(found)
        if re.fullmatch(r",\s*", text[end:start])
    }
    return [name for name, _, _ in found], places, _groups(text, found)


# A label before the name it labels: "the project with UUID SUPERFANCY"; "IP" and "URL"
# only alone, before an address ("the server at IP address 192.168.77.71"; "IP Man" and
# "URL Shortener" are names).
_LABEL = re.compile(r"(?:ID|UUID|GUID)(?:[ \t]+|$)|(?:IP|URL)$")

# After a name with "'s" that is the name's own: the end of the text or of a sentence, or
# a stop word ("from McDonald's.", "at Macy's and"); elsewhere "'s" is a possessive
# ("Einstein's theory", "Einstein's 1905 paper", "Einstein's, Newton's and Bohr's").
_NAME_ENDS = re.compile(
    r"[ \t]*(?:$|[.!?;:)](?:\s|$)|[ \t](?!(?:and|or)[ \t]+[A-Z][\w-]*['\u2019]s\b)(?:"
    + "|".join(sorted(STOP_WORDS, key=len, reverse=True))
    + r")\b)"
)


# The user saying who they are: "My name is Emily", "Hi, I am Karan.", "I'm Émile Zola";
# then the name's capitalised words.
_OWN_NAME = re.compile(
    r"\b(?:(?i:my[ \t]+name[ \t]+is)|(?P<am>(?i:i[ \t]+am|i['\u2019]m)))[ \t]+"
    r"(?P<words>[^\W\d_][\w'\u2019-]*(?:[ \t]+[^\W\d_][\w'\u2019-]*){0,2})"
)
_PREPOSITIONS = frozenset({"for", "to", "in", "with", "about", "on", "at", "into", "of"})


def _own_name(text: str, names: list[str]) -> str | None:
    """The name the user gives as their own, where it is one of the task's names. After
    "I am", not title-cased prose, where a preposition comes next ("I am Looking for",
    "I'm Interested In")."""
    for said in _OWN_NAME.finditer(text):
        words = said["words"].split()
        capitalised = list(itertools.takewhile(lambda word: word[0].isupper(), words))
        after = words[len(capitalised) : len(capitalised) + 1]
        if said["am"] and {w.lower() for w in capitalised[1:] + after} & _PREPOSITIONS:
            continue
        for count in range(len(capitalised), 0, -1):
            if (name := " ".join(capitalised[:count])) in names:
                return name
    return None


def _starts_sentence(text: str, place: int) -> bool:
    """Whether `place` begins the text, a sentence, a line or what follows a colon."""
    last = place - 1
    while last >= 0 and text[last] in " \t":
        last -= 1
    return last < 0 or text[last] in ".!?:>\n" or text[max(last - 1, 0) : last + 1] == "\\n"


def _groups(text: str, spans: list[tuple[str, int, int]]) -> list[list[str]]:
    """Values written as one list ("'Age', 'Income' and 'Sex'", "Microsoft and Google")."""
    groups: list[list[str]] = []
    last_end: int | None = None
    for value, start, end in spans:
        if last_end is not None and _SEPARATOR.fullmatch(text[last_end:start]):
            groups[-1].append(value)
        else:
            groups.append([value])
        last_end = end
    return [group for group in groups if len(group) > 1]


def _word_runs(texts: Iterable[str]) -> set[str]:
    """Every run of whole words of `texts`, lowercase: "canadian dollars" gives it,
    "canadian" and "dollars"."""
    runs: set[str] = set()
    for text in texts:
        words = text.lower().split()
        for start in range(len(words)):
            runs.update(" ".join(words[start:end]) for end in range(start + 1, len(words) + 1))
    return runs


# A number just before a word: "10 kPa", "4GHz".
_NUMBER_BEFORE = re.compile(r"\d[ \t]?$")


def _unit_after_number(text: str, start: int, phrase: str) -> bool:
    """Whether the phrase at `start` begins with a unit's symbol written after a number
    ("10 kPa", "4 GHz", "16 GB of RAM"): a measure, not a name or an identifier."""
    before = text[max(0, start - 2) : start]
    return unit_of(phrase.split(maxsplit=1)[0]) is not None and bool(_NUMBER_BEFORE.search(before))


def _cut(
    pattern: re.Pattern[str],
    text: str,
    present: bool = True,
    wanted: Callable[[re.Match[str]], bool] = lambda _: True,
) -> tuple[list[re.Match[str]], str]:
    """The matches of `pattern` in `text` that are `wanted`, and `text` with them blanked
    out (spaces: places in it stay the task's); nothing to look for unless `present`."""
    found = [m for m in pattern.finditer(text) if wanted(m)] if present else []
    return found, _blanked(text, found)


def _blanked(text: str, found: list[re.Match[str]]) -> str:
    """`text` with the spans of `found` as spaces."""
    return blanked(text, [match.span() for match in found])


def _pair(text: str) -> tuple[tuple[str, str] | None, str]:
    """What `text` replaces with what ("replace A with B", the pair blanked from the text
    but its verb), else what it changes into what (`_changed`, left in the text)."""
    if _REPLACING.search(text) and (replacing := _REPLACE.search(text)):
        kept = replacing["verb"].ljust(replacing.end() - replacing.start())
        rest = text[: replacing.start()] + kept + text[replacing.end() :]
        return (_unquoted(replacing["old"]), _unquoted(replacing["new"])), rest
    return _changed(text), text


def _changed(text: str) -> tuple[str, str] | None:
    """What `text` changes into what: after a change verb, the words either side of "to"
    ("for" after swap), the old one quoted, written as a value (a number, a path, an
    identifier), after a word for a value ("the variable tmp", "from 8000") or, after
    rename and swap, the verb's first word ("rename tmp to buffer"); or two assignments
    whole ("DEBUG = True to DEBUG = False"); or a quoted line and the quoted text it
    should read as (`_read_as`: "… `a = 1` so it reads `a = 2`"). Not a span ("lines
    10 to 20"), a file renamed ("rename notes.txt to report.txt") or a stop word."""
    if (read_as := _read_as(text)) is not None:
        return read_as
    for verb in _CHANGE_VERB.finditer(text):
        words = _words_after(text, verb.end())
        verbed = verb[1].lower()
        joining = "for" if verbed == "swap" else "to"
        for place in range(len(words) - 2):
            if words[place + 1].lower() != joining:
                continue
            before = words[place - 1].lower() if place else verbed
            if before == "=" and place >= 2 and len(words) > place + 4 and words[place + 3] == "=":
                return " ".join(words[place - 2 : place + 1]), " ".join(
                    words[place + 2 : place + 5]
                )
            old, new = _value(words[place]), _value(words[place + 2])
            if (
                old
                and new
                and (new.lower() not in STOP_WORDS or words[place + 2][:1] in _QUOTE_MARKS)
                and _changes(verbed, words[place], before)
            ):
                return old, new
    return None


def _edited_line(old: str, new: str) -> bool:
    """Whether quoted `old` reading as `new` is a line edited: words, not one name ("fix
    `load_settings` so it reads `settings.toml`" says what code should do), whose first
    word, its key, is kept ("`timeout = 5`" → "`timeout = 50`", "`from a import b`" →
    "`from c import b`"; not "the log says 'permission denied: ./run.sh'; make it
    `chmod +x run.sh`")."""
    old_words, new_words = _LINE_WORD.findall(old.lower()), _LINE_WORD.findall(new.lower())
    return len(old.split()) > 1 and old_words[:1] == new_words[:1] != []


def _read_as(text: str) -> tuple[str, str] | None:
    """The first quoted line of `text` and the quoted text it should read as: two quotes
    one after the other, a word of changing or holding it before the first
    (`_READS_BEFORE`), "so it reads" or "make it" between them (`_READS_BETWEEN`)."""
    for first, second in pairwise(QUOTED.finditer(text)):
        before = text[max(0, first.start() - _BEFORE_READS) : first.start()]
        between = text[first.end() : second.start()]
        if _READS_BEFORE.search(before) and _READS_BETWEEN.fullmatch(between):
            old, new = quote(first, text), quote(second, text)
            if _edited_line(old, new):
                return old, new
    return None


def _words_after(text: str, start: int) -> list[str]:
    """The words of `text` from `start` (a quote one word) up to the sentence's end, the
    first within `_CHANGE_SPAN` characters; a word cut where the text read ends is left
    out."""
    end = min(len(text), start + _CHANGE_SPAN + _QUOTE_SPAN + 2)
    found = []
    for word in _CHANGE_WORD.finditer(text, start, end):
        if word.start() - start > _CHANGE_SPAN or (word.end() == end < len(text)):
            break
        found.append(word[0])
        if word[0][-1] in ".;:!?" and word[0][:1] not in _QUOTE_MARKS:
            break  # the sentence ends with it
    return found


def _value(word: str) -> str:
    """A word as a value: a quote's text, else without the marks after it."""
    close = _QUOTE_MARKS.get(word[:1])
    if close and len(word) > 1 and word.endswith(close):
        return word[1:-1]
    return word.rstrip(_TRAILING)


def _changes(verb: str, old: str, before: str) -> bool:
    """Whether `old`, as written after the word `before`, is a value the verb changes."""
    quoted = old[:1] in _QUOTE_MARKS
    if old.lower() in STOP_WORDS or before in _SPANNED:
        return False
    if verb == "rename" and not quoted and ("/" in old or re.search(r"\.[a-z]\w{0,4}$", old)):
        return False  # a file renamed is no text edited
    if quoted or _MARKED_VALUE.search(old.rstrip(_TRAILING)):
        return True
    return before in _VALUE_NOUNS or (before == verb and verb in _FIRST_WORD_CHANGED)


def _unquoted(text: str) -> str:
    return text[1:-1] if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"`" else text


def _evaluated(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _literal(text: str) -> list[Any]:
    """A literal list's items; a tuple's as a list."""
    value = _evaluated(text)
    return list(value) if isinstance(value, list | tuple) else []
