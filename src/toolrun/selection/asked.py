"""What a text parameter asks for, for step 5 (`arguments`): its own words and its
description's, the values the description lists, whether it shows a "City, State" form;
and the value of that kind the task gives — what to replace, a currency's code, a URL, an
e-mail address, a pattern, a path, an address, a date, a year, an expression, a listed
value or the kind before a noun — with what the tool is about, which an optional
parameter takes none of."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.currencies import chosen
from toolrun.selection.facts import Facts
from toolrun.selection.filekinds import BUILD_FILES, FILE_EXTENSIONS, describes_globs, file_pattern
from toolrun.selection.kinds import forget, own_words, range_end, takes_command
from toolrun.selection.options import MEANING, listed, named_option
from toolrun.selection.placing import address, shows_place_with_region, takes_address, written_place
from toolrun.selection.sorts import sort_of
from toolrun.selection.text import split_words, stem

PATH_WORDS = frozenset({"path", "file", "filename", "directory", "folder", "dir"})
URL_WORDS = frozenset({"url", "link", "website", "endpoint"})
_DIRECTORY_WORDS = frozenset({"directory", "folder", "dir"})
_FILE_WORDS = frozenset({"file", "filename"})
_WORKPLACES = frozenset({"repo", "repository", "root", "cwd", "workdir", "workspace"})
# What a directory is not: a path the word before calls so, a file's name by its
# extension (a known kind's, `filekinds`) or a build file's.
_NOT_A_DIRECTORY = frozenset(stem(word) for word in ("file", "branch", "tag", "commit", "revision"))
_A_FILE = re.compile(rf"(?:{BUILD_FILES})file|.*\.(?:{FILE_EXTENSIONS})", re.I)
_OLD = frozenset({"old", "original", "find", "search", "source"})
_NEW = frozenset({"new", "replacement", "replace", "target"})
_EXPRESSION_WORDS = frozenset({"function", "equation", "expression", "formula", "polynomial"})
_EMAIL_ADDRESS_ONLY = re.compile(r"(?<!\bor )\be-?mail address(?:es)?\b(?! or\b)", re.I)
_EMAIL_WORDS = frozenset({"email", "mail", "recipient"})
_PATTERN_WORDS = frozenset({"pattern", "glob"})
# Sources of values in a form only some tools take (`Filled.formed`).
URL_GIVEN = "URL in the task"
EMAIL_GIVEN = "e-mail address in the task"
PAIR_GIVEN = "what to replace in the task"
WEBSITE_GIVEN = "website in the task"  # a URL's parameter given a domain ("Foodnetwork.com")
_DATE_WORDS = frozenset({"date", "day", "when", "time"})
# A website named by its domain alone, which `facts` reads as a path ("Foodnetwork.com",
# "example.org/recipes"): a name, a dot and a common top-level domain that is no file's
# extension too (not .ai, .app, .io, .co, .me), for a parameter whose name says it.
_DOMAIN = re.compile(
    r"(?:www\.)?[A-Za-z0-9][\w-]*(?:\.[\w-]+)*\."
    r"(?:com|org|net|gov|edu|info|uk|de|fr|us|dev|tv)(?:/[\w./-]*)?"
)


@dataclass(frozen=True)
class Asked:
    """What a string parameter's name and description ask for, worked out once: the
    name's words, with the description's first ones, the values it lists, what it says
    some mean ("'CA' for California"), whether it shows a "City, State" value."""

    own: frozenset[str]
    words: frozenset[str]
    options: tuple[str, ...]
    meanings: tuple[tuple[str, str], ...]
    comma: bool


WRITTEN = ("commands", "urls", "pair")  # the `Facts` of `takes_written`
# The words of the parameters of a tool that changes text: old_string and new_string (not
# a translation's source and target, nor a search's terms).
_CHANGED_FROM = frozenset({"old", "original"})
_CHANGED_TO = frozenset({"new", "replacement"})


def takes_written(card: ToolCard) -> frozenset[str]:
    """The values a task may write out that `card` has a parameter for, as the `Facts`
    that hold them: "commands" (a command to run), "urls" (a URL), "pair" (what to
    change into what: an old and a new value)."""
    names = [own_words(name) for name in card.properties]
    found = {"commands"} if takes_command(card) else set()
    if any(words & URL_WORDS for words in names):
        found.add("urls")
    if any(words & _CHANGED_FROM for words in names) and any(
        words & _CHANGED_TO for words in names
    ):
        found.add("pair")
    return frozenset(found)


@functools.lru_cache(maxsize=8192)
def asked_for(name: str, description: str) -> Asked:
    own = own_words(name)
    return Asked(
        own,
        own | frozenset(split_words(description[:60])),
        listed(description),
        tuple(MEANING.findall(description)),
        shows_place_with_region(description),
    )


@functools.lru_cache(maxsize=4096)
def subject_of(tool_name: str) -> frozenset[str]:
    """The stems of a tool's name: what it is about ("book_hotel": book, hotel). Not its
    description's, which often lists the values a parameter takes ("Find Italian,
    Chinese or Mexican restaurants")."""
    return frozenset(stem(word) for word in split_words(tool_name))


def about(value: Any, subject: frozenset[str]) -> bool:
    """Whether each word of `value` (text) is one of what the tool is about: "hotel"
    for book_hotel."""
    words = split_words(value) if isinstance(value, str) else []
    return bool(words) and all(stem(word) in subject for word in words)


def listed_or_kind(
    name: str,
    asked: Asked,
    description: str,
    task: str,
    facts: Facts,
    required: bool,
    subject: frozenset[str],
) -> tuple[Any, str]:
    """A value the description lists that the task names, not one given already, else
    the kind the task names ("a major chord progression", not "a C key progression"):
    for an optional parameter, neither a word of what the tool is about ("my bot" for a
    bot's tool); a kind no word given already ("vegan")."""
    options = [o for o in asked.options if o.lower() not in facts.used]
    value, source = named_option(options, task, asked.meanings)
    if not required and about(value, subject):
        value, source = None, ""
    if value is None:
        sort = sort_of(name, description, task)
        if sort and sort.lower() not in facts.used and (required or not about(sort, subject)):
            return sort, "kind in the task"
        return None, ""
    for option, meaning in asked.meanings:  # "'CA' for California" is used too
        if option == value:
            forget(facts, meaning)
    if isinstance(value, str) and asked.comma:  # "e.g. Boston, MA" shows a form
        value = written_place(value, facts, description, name)
    return value, source


def an_address_only(description: str) -> bool:
    """Whether the description says the parameter is an e-mail address and nothing else
    ("The email address to be included in the CC field"; not "The name or email address
    of the recipient", "The user's email address or Slack ID", "The postal address"),
    which takes no name."""
    return bool(_EMAIL_ADDRESS_ONLY.search(description[:80]))


def typed(asked: Asked, description: str, facts: Facts) -> tuple[Any, str]:
    """The kind of value the parameter's name or description asks for, where the task
    has one: what to replace, a currency's code (of its side: "from", "to"), a URL (or
    a website's domain: "Foodnetwork.com"), an e-mail address, a pattern (for a glob,
    the kind of file the task names: "python files"), a path, a date (in the format
    asked), a year, a math expression."""
    own, words = asked.own, asked.words
    if "currency" in own and (mention := chosen(own, facts.currencies)):
        facts.currencies.remove(mention)
        return mention.code, "currency in the task"
    if facts.pair and own & (_OLD | _NEW):
        return facts.pair[0 if own & _OLD else 1], PAIR_GIVEN
    kinds: list[tuple[frozenset[str], list[Any], str]] = [
        (URL_WORDS, facts.urls, URL_GIVEN),
        (_EMAIL_WORDS, facts.emails, EMAIL_GIVEN),
        (_PATTERN_WORDS, facts.patterns, "pattern in the task"),
        (PATH_WORDS, facts.paths, "path in the task"),
    ]
    for wanted, pool, source in kinds:
        if not words & wanted:
            continue
        fitting = _for_a_directory(pool, words, facts) if pool is facts.paths else pool
        if fitting:
            value = fitting[0]
            pool.remove(value)
            return value, source
    globbed = "glob" in own or (own & _PATTERN_WORDS and describes_globs(description))
    if globbed and (pattern := file_pattern(facts.whole, description)):
        return pattern, "the kind of file the task names"
    if own & URL_WORDS and (domain := next(filter(_DOMAIN.fullmatch, facts.paths), None)):
        facts.paths.remove(domain)  # "from Foodnetwork.com": a website named by its domain
        return domain, WEBSITE_GIVEN
    if facts.addresses and takes_address(own, words, description):
        return address(own, facts), "address in the task"
    if words & _DATE_WORDS and facts.dates:
        facts.given_dates.append(facts.dates.pop(0))
        return facts.given_dates[-1].written(description), "date in the task"
    if words & _DATE_WORDS and (ended := range_end(own, facts)) is not None:
        return ended.written(description), "the end of a range of times in the task"
    if "year" in own and (year := next((n for n in facts.numbers if n.year_like), None)):
        facts.numbers.remove(year)
        return str(year.value), "year in the task"
    if words & _EXPRESSION_WORDS and facts.expressions:
        return facts.expressions.pop(0), "expression in the task"
    return None, ""


def asks_for_a_path(asked: Asked) -> bool:
    """Whether a parameter takes a path: its name says a path, a file or a directory
    ("file_path", "dir"), or it is named for where a tool works and its description
    says a directory ("repo": "A directory inside the repository")."""
    return bool(
        asked.own & PATH_WORDS or (asked.own & _WORKPLACES and asked.words & _DIRECTORY_WORDS)
    )


def asks_for_a_directory(asked: Asked) -> bool:
    """Whether a path parameter takes a directory (whose name may be a bare word:
    "frontend"), not a file."""
    return bool(asked.words & _DIRECTORY_WORDS and not asked.own & _FILE_WORDS)


def _for_a_directory(paths: list[str], words: frozenset[str], facts: Facts) -> list[str]:
    """The paths a parameter whose words ask for a directory (not a file) may take: none
    the word just before calls a file, a branch or a tag ("delete the file
    build/out.log", "the branch release/2.0"; "/etc/init.d", "move the file to
    /tmp/backup" may), nor a file's name ("package.json", "Dockerfile")."""
    if words & _DIRECTORY_WORDS and not words & _FILE_WORDS:
        return [
            path
            for path in paths
            if not set(facts.before.get(path, [])[-1:]) & _NOT_A_DIRECTORY
            and not _A_FILE.fullmatch(path.rsplit("/", 1)[-1])
        ]
    return paths
