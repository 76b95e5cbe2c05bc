"""Step 5 of selection: argument values for the chosen tool from the task's words
(`facts`) and a supplied context — quoted strings, numbers (by the words around them),
paths, URLs, e-mail addresses, dates (in the format asked), literal lists and dicts, math
expressions, codes, identifiers, names, enum values and values a description lists,
units (`units`), templates a description shows, booleans, schema defaults — checked
against the tool's schema, with missing required parameters named."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, fields
from typing import Any

from toolrun.selection.arrays import ONE_ITEM, array
from toolrun.selection.asked import (
    EMAIL_GIVEN,
    PAIR_GIVEN,
    URL_GIVEN,
    URL_WORDS,
    WEBSITE_GIVEN,
    Asked,
    an_address_only,
    asked_for,
    asks_for_a_directory,
    asks_for_a_path,
    listed_or_kind,
    subject_of,
    typed,
)
from toolrun.selection.bare import bare_named
from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import Facts, without_values
from toolrun.selection.filekinds import A_PATH
from toolrun.selection.flags import flag
from toolrun.selection.kinds import (
    COMMAND_GIVEN,
    asker_name,
    colours,
    commands,
    divisions,
    forget,
    meant_numbers,
    month_names,
    named_language,
    outside_names,
    own_words,
    seasons,
    text_language,
    times_of_day,
)
from toolrun.selection.naming import GENERIC, named_strings
from toolrun.selection.numbering import LEFT_NUMBER, assign_numbers, kind, name_words
from toolrun.selection.options import named_option
from toolrun.selection.placing import (
    PLACES,
    address_place,
    introduced,
    place_name,
    state,
    written_place,
)
from toolrun.selection.quotes import quoted_strings
from toolrun.selection.roles import named_as
from toolrun.selection.searched import SEARCH_WORDS, searched_words
from toolrun.selection.text import split_words
from toolrun.selection.units import measured, unit_parameters
from toolrun.selection.urls import HOST_WORDS, host_filled, templated_url
from toolrun.selection.worded import worded_numbers
from toolrun.tools.validation import argument_errors

_SOURCE = frozenset({"from", "source", "origin", "original", "old", "current"})
_LANGUAGE_WORDS = frozenset({"language", "languages", "lang", "locale"})
_A_DIRECTORY = re.compile(rf"{A_PATH.pattern}|[^\s'\"`]+", re.I)  # "frontend" too
_TEMPLATE_KEY = re.compile(r"(?<![\w/])([a-z_]+):(?=[A-Z])")
_COMMA_SEPARATED = re.compile(r"\bcomma[- ]separated\b", re.I)
_PLAYED = frozenset({"song", "track", "title", "query", "tune", "music", "media"})
_COUNTY = "counti"
# Sources of a value the task neither names for its parameter nor writes in the form the
# parameter asks for: the first capitalised name left, the first number left for a
# required number, the whole task, the schema's default.
_ANY_NAME = "name in the task"
_WHOLE_TASK = "the task itself"
LOOKED_FOR = "the words the task looks for"
_DEFAULT = "default"
_CONTEXT = "context"
_LOOSE = frozenset({_ANY_NAME, LEFT_NUMBER, _WHOLE_TASK, _DEFAULT, LOOKED_FOR})
# Sources of a value in a form that only tools of one kind take: a command (a shell's), a
# URL or a website (a web client's), an e-mail address (a mailer's), what to change into
# what (an editor's).
_FORMS = frozenset({COMMAND_GIVEN, URL_GIVEN, WEBSITE_GIVEN, EMAIL_GIVEN, PAIR_GIVEN})
# A parameter for what the user says, which takes the whole task where nothing else fits.
_SAYING = frozenset({"message", "statement", "question", "utterance", "sentence", "prompt"})
# A text parameter that takes text the task gives as written where no name says whose.
_TEXTS = frozenset({"content", "contents", "text", "body", "note", "comment", "reply", "caption"})
# … and parameters for other kinds of value, which never take it; the marker's own words
# (stems), which name no parameter ("the following words verbatim:").
_NOT_TEXT = frozenset(
    {"email", "mail", "url", "link", "path", "file", "date", "time", "subject", "title"}
    | {"location", "address", "city", "country", "state", "recipient", "to", "from"}
)
_MARKER_STEMS = frozenset({"verbatim", "say", "that", "with", "the", "follow", "word", "for"})


@dataclass
class Filled:
    """Step 5's answer: the arguments, where each came from, what is missing, and which
    are guesses (`guesses`) to check before a call."""

    arguments: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    guessed: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        """Every required argument found (none guessed) and the schema holds."""
        return not self.missing and not self.errors and not self.guessed

    @property
    def formed(self) -> float:
        """1 where a value found (not from the caller's context) is in a form that only
        tools of one kind take — a command, a URL or a website, an e-mail address, or both
        sides of a change (what to change into what) — else 0: a task that hands a tool
        the very kind of value it runs on asks for that tool, whatever words it shares
        with it ("list files using dir Desktop")."""
        sources = list(self.sources.values())
        pair = sources.count(PAIR_GIVEN) == 2  # an old and a new value, not a search's one
        return float(pair or any(s in _FORMS - {PAIR_GIVEN} for s in sources))

    @property
    def recognised(self) -> float:
        """The share of the arguments found that the task names for their parameter or
        writes in a form (a command, a place, an enum's option, a quoted text…) rather
        than the first capitalised name or number left, the whole task or a default; 0
        where none was found. Values from the caller's context are left out of it. A task
        that a tool fits tends to give the tool its values so."""
        found = [source for source in self.sources.values() if source != _CONTEXT]
        return sum(source not in _LOOSE for source in found) / len(found) if found else 0.0


def fill(card: ToolCard, task: str, context: dict[str, Any] | None = None) -> Filled:
    """Arguments for `card` from `task` and `context` (values by parameter name win);
    a required parameter the task leaves open takes its schema default. Missing: the
    required parameters left open, and those a rule of the schema requires of the
    values found (an operation's own)."""
    facts = Facts.of(task)
    facts.identifiers = [found for found in facts.identifiers if found not in card.properties]
    facts.codes = [found for found in facts.codes if found not in card.properties]
    context = context or {}
    filled = Filled({})
    found = _found(card, task, facts)
    for name in card.required + [p for p in card.properties if p not in card.required]:
        spec = card.properties[name]
        if name in context:
            filled.arguments[name], filled.sources[name] = context[name], _CONTEXT
            continue
        value, source = found.get(name, (None, ""))
        if value is None and name in card.required and "default" in spec:
            value, source = spec["default"], _DEFAULT
        if value is not None:
            filled.arguments[name], filled.sources[name] = value, source
        elif name in card.required:
            filled.missing.append(name)
    problems = argument_errors(card.validator, filled.arguments)
    if problems:
        filled.errors.append(problems)
        filled.missing += _required_by_rules(card, filled.arguments)
    return filled


def _required_by_rules(card: ToolCard, arguments: dict[str, Any]) -> list[str]:
    """The parameters a rule of the schema requires of these arguments beyond its
    required ones (a terminal's `send` needs a session), that the task leaves open."""
    found: list[str] = []
    for error in card.validator.iter_errors(arguments):
        if error.validator == "required" and not error.path:
            names = error.validator_value if isinstance(error.validator_value, list) else []
            found += [n for n in names if n not in arguments and n not in card.required]
    return list(dict.fromkeys(found))


def checked(
    card: ToolCard, arguments: dict[str, Any], context: dict[str, Any], source: str
) -> Filled:
    """`arguments` found some other way (a model) with `context` over them, checked like
    `fill`'s."""
    values = {**arguments, **{k: v for k, v in context.items() if k in card.properties}}
    filled = Filled(
        values,
        sources={name: _CONTEXT if name in context else source for name in values},
        missing=[name for name in card.required if name not in values],
    )
    problems = argument_errors(card.validator, values)
    if problems:
        filled.errors.append(problems)
    return filled


def _found(card: ToolCard, task: str, facts: Facts) -> dict[str, tuple[Any, str]]:
    """A value and its source for each parameter the task gives one: numbers first, then
    strings the words just before them name, lists, and the rest in order."""
    specs = card.properties
    order = card.required + [p for p in specs if p not in card.required]
    free_text = [p for p in order if _is_free_text(specs[p])]
    written_numbers = list(facts.numbers)
    found = seasons(free_text, facts)  # before the numbers: its years are none
    found |= assign_numbers(card, facts, worded_numbers(card, task) | meant_numbers(card, task))
    found |= times_of_day(free_text, card, facts)
    found |= asker_name(free_text, facts)
    found |= _used(commands(free_text, facts), facts)  # a quoted one is no other's quote
    units = unit_parameters([p for p in free_text if p not in found], card, task, written_numbers)
    found |= _used(units, facts)
    found |= _used(measured([p for p in free_text if p not in found], card, task), facts)
    found |= divisions([p for p in free_text if p not in found], facts)
    found |= _used(colours([p for p in free_text if p not in found], facts), facts)
    found |= _used(month_names([p for p in free_text if p not in found], facts), facts)
    found |= _used(named_language([p for p in free_text if p not in found], card, facts), facts)
    found |= text_language([p for p in free_text if p not in found], card, facts)
    found |= _verbatim([p for p in free_text if p not in found], card, facts)
    found |= named_strings([p for p in free_text if p not in found], card, facts)
    subject = subject_of(card.name)
    hosts = HOST_WORDS - {"address"}  # "ip_address", not a postal address
    hosted = any(own_words(p) & hosts for p in specs)  # else the URL's host is its own
    for name in [p for p in free_text if own_words(p) & URL_WORDS and not hosted]:
        description = str(specs[name].get("description", ""))
        if host := host_filled(facts.urls, description, task):  # "https://{ip}/…"
            forget(facts, host)
    lists = [p for p in order if kind(specs[p]) == "array"]
    options = [p for p in order if "enum" in specs[p] and p not in lists]
    for name in lists + options + [p for p in order if p not in {*lists, *options, *found}]:
        value, source = _value(name, specs[name], task, facts, name in card.required, subject)
        if value is not None:
            found[name] = (value, source)
            forget(facts, value)
    found |= bare_named([p for p in free_text if p not in found], card, facts)
    # a role the task gives outweighs a value taken for want of better ("the first name left")
    guessed = [p for p in free_text if p not in found or found[p][1] in _LOOSE]
    found |= named_as(guessed, task, facts)
    for name in [p for p in free_text if own_words(p) & URL_WORDS]:
        given = found.get(name, ("", ""))[0]
        url = given if isinstance(given, str) and given.startswith(("http:", "https:")) else None
        description = str(specs[name].get("description", ""))
        if templated := templated_url(url, description, task, _values(found)):
            found[name] = (templated, "the URL's template, filled from the task")
    return found


def _values(found: dict[str, tuple[Any, str]]) -> dict[str, Any]:
    """The values found, by name, those of an object's properties too."""
    values = {name: value for name, (value, _) in found.items()}
    for value in list(values.values()):
        if isinstance(value, dict):
            values |= {key: inner for key, inner in value.items() if key not in values}
    return values


def _used(given: dict[str, tuple[Any, str]], facts: Facts) -> dict[str, tuple[Any, str]]:
    """`given`, its values forgotten: given to no other parameter."""
    for value, _ in given.values():
        forget(facts, value)
    return given


def _is_free_text(spec: dict[str, Any]) -> bool:
    return kind(spec) == "string" and "enum" not in spec


def _verbatim(names: list[str], card: ToolCard, facts: Facts) -> dict[str, tuple[Any, str]]:
    """Text the task gives as written ("with the following modification verbatim: no
    onions", "with content - go to gym") to the text parameter whose name's word comes
    right before it; the rest is left for the first parameter for text (`_first`), or,
    where the tool has none, given to its first required text parameter."""
    texts = [n for n in names if not own_words(n) & _NOT_TEXT]
    found: dict[str, tuple[Any, str]] = {}
    for text in list(facts.verbatim):
        near = list(facts.before.get(text, []))
        while near and near[-1] in _MARKER_STEMS:
            near.pop()
        last = near[-1:] if near else []
        named = [n for n in texts if n not in found and (name_words(n) - GENERIC) & set(last)]
        if named:
            found[named[0]] = (text, "given as written in the task")
            facts.verbatim.remove(text)
    if facts.verbatim and not any(own_words(n) & (_SAYING | _TEXTS) for n in texts):
        required = [n for n in texts if n in card.required and n not in found]
        if required:
            found[required[0]] = (facts.verbatim.pop(0), "given as written in the task")
    return found


def _value(
    name: str,
    spec: dict[str, Any],
    task: str,
    facts: Facts,
    required: bool,
    subject: frozenset[str],
) -> tuple[Any, str]:
    found = kind(spec)
    description = str(spec.get("description", ""))
    if "enum" in spec:
        source = bool(set(split_words(name)) & _SOURCE)
        asked = asked_for(name, description)
        language = bool(asked.words & _LANGUAGE_WORDS)
        options = spec["enum"]
        text = outside_names(task, facts, options)
        return named_option(options, text, asked.meanings, source=source, language=language)
    if found == "boolean":
        return flag(name, task)
    if found == "array":
        return array(name, spec, task, facts, required)
    if found == "object":
        return _object(name, spec, task, facts, required)
    if found != "string":
        return None, ""
    return _text(name, spec, task, facts, required, subject)


def _text(
    name: str,
    spec: dict[str, Any],
    task: str,
    facts: Facts,
    required: bool,
    subject: frozenset[str],
) -> tuple[Any, str]:
    """A string: written as a template its description shows ("in the format
    'track:SongName artist:ArtistName'") where the task has a value for each key, else
    the kind of value its name or description asks for, else a value its description
    lists that the task names, else values it writes together (`_together`: a list,
    the one item it orders, what it asks to play), else the first quoted string,
    identifier, code or capitalised name left (an optional parameter: a name only for a
    place the task introduces as one, "in Oslo"; an optional county none)."""
    description = str(spec.get("description", ""))
    if (keys := _template(description)) and (keyed := _templated(keys, task, facts)):
        return keyed, "values in the task, written as the description's template"
    asked = asked_for(name, description)
    value, source = typed(asked, description, facts)
    written = [n for n in facts.names if n in facts.places] if asked.comma else []
    if value is None and written:  # "Boston, MA" where the description shows one
        facts.names.remove(written[0])
        value, source = written_place(written[0], facts, description, name), "place in the task"
    if value is None:
        value, source = listed_or_kind(name, asked, description, task, facts, required, subject)
    if value is None and "state" in asked.own and (found := state(facts, description)):
        value, source = found, "the state of a city in the task"
    placed = name_words(name) & PLACES and "state" not in asked.own
    if value is None and placed and (found := address_place(name, facts, description)):
        value, source = found, "the place of an address in the task"
    if value is not None or asked.own & {"email", "mail", "url"} or an_address_only(description):
        return value, source
    if (
        not required
        and name_words(name) & PLACES - {_COUNTY}  # a county only named so (`divisions`)
        and any(introduced(n, facts) for n in facts.names)
    ):
        return place_name(name, facts, description), "place in the task"  # "in Oslo"
    value, source = _together(name, facts, description)
    if value is not None:
        return value, source
    return _first(name, asked, facts, description, names=required)


def _together(name: str, facts: Facts, description: str) -> tuple[Any, str]:
    """Values a task writes together, for a text parameter: those of a list, joined as
    a description of a comma-separated list asks; the one item the task orders ("order
    a burger") for a parameter named for an item; what it asks to play ("play Johnny
    Johnny Yes papa") for one named for a song, track, title or query (not its id)."""
    if _COMMA_SEPARATED.search(description) and (joined := _joined(facts, description)):
        return joined, "values in the task, joined as the description asks"
    if name_words(name) & ONE_ITEM and facts.counted and len(facts.counted[0]) == 1:
        return facts.counted.pop(0)[0], "counted items in the task"
    own = own_words(name)
    if facts.played and own & _PLAYED and "id" not in own:
        return facts.played.pop(0), "what the task asks to play"
    return None, ""


def _template(description: str) -> tuple[str, ...]:
    """The keys of a template of keyed values that the description shows in quotes
    ("in the format 'track:SongName artist:ArtistName'": track, artist)."""
    for example in quoted_strings(description):
        keys = tuple(_TEMPLATE_KEY.findall(example))
        if len(keys) > 1 and example.startswith(f"{keys[0]}:"):
            return keys
    return ()


def _templated(keys: tuple[str, ...], task: str, facts: Facts) -> str | None:
    """The task's value for each key as if it were a parameter of its own, written as
    the template ("track:Friends artist:Marshmello"); none unless every key has one."""
    card = ToolCard("template", "", {"type": "object", "properties": {k: {} for k in keys}})
    trial = copy.deepcopy(facts)  # the task's facts are spent only if every key has a value
    values = _found(card, task, trial)
    if len(values) < len(keys):
        return None
    for spent in fields(facts):
        setattr(facts, spent.name, getattr(trial, spent.name))
    return " ".join(f"{key}:{values[key][0]}" for key in keys)


def _joined(facts: Facts, description: str) -> str | None:
    """For a text parameter described as a comma-separated list: the values the task
    writes as one list ("Alice and Bob", "'red' and 'green'"), else its paths, codes or
    identifiers where it has two or more of one kind; joined with a comma (and a space
    where the description's example has one)."""
    group = next((group for group in facts.groups if len(group) > 1), None)
    pool = next((p for p in (facts.paths, facts.codes, facts.identifiers) if len(p) > 1), None)
    values = list(group or pool or [])
    if not values:
        return None
    if group:
        facts.groups.remove(group)
    forget(facts, values)
    spaced = any(", " in example for example in quoted_strings(description))
    return (", " if spaced else ",").join(values)


def _first(
    name: str, asked: Asked, facts: Facts, description: str, *, names: bool
) -> tuple[Any, str]:
    """The first quoted string left; for what the user says (a message, a question) the
    task itself; the first identifier, code or (if `names`: an optional parameter takes
    none, they are too loose a guess) capitalised name left; a path takes only a quoted
    path (one with a slash or a backslash, a file's extension, or a build file's or a
    project file's name — README, LICENSE — spaces allowed); text the task gives as written
    before all of them, for a parameter for text (a message, content, a note)."""
    if facts.verbatim and asked.own & (_SAYING | _TEXTS):
        return facts.verbatim.pop(0), "given as written in the task"
    pathlike = asks_for_a_path(asked) and not asked.own & (_SAYING | _TEXTS)  # not file_text
    if pathlike:  # a quoted path, not "connection refused" nor 'lodash'
        a_path = _A_DIRECTORY.fullmatch if asks_for_a_directory(asked) else A_PATH.fullmatch
        if quoted_path := next(filter(a_path, facts.quoted), None):
            facts.quoted.remove(quoted_path)
            return quoted_path, "quoted in the task"
    elif facts.quoted:
        return facts.quoted.pop(0), "quoted in the task"
    if names and asked.own & _SAYING and facts.whole:  # "Hey, how are you?" as a message
        return facts.whole, _WHOLE_TASK
    if pathlike:  # a path parameter takes no identifier or name
        return None, ""
    if facts.identifiers:
        return facts.identifiers.pop(0), "identifier in the task"
    if facts.codes:
        return facts.codes.pop(0), "code in the task"
    if (
        names
        and asked.own & SEARCH_WORDS
        and (looked := searched_words(without_values(facts.whole)))
    ):
        return looked, LOOKED_FOR
    if facts.names and names:
        return place_name(name, facts, description), _ANY_NAME
    return None, ""


def _object(
    name: str, spec: dict[str, Any], task: str, facts: Facts, required: bool
) -> tuple[Any, str]:
    """A literal dict in the task; else, for an object whose properties are described,
    those the task gives values for."""
    if facts.objects:
        return dict(facts.objects.pop(0)), "dict in the task"
    if not isinstance(spec.get("properties"), dict):
        return None, ""
    inner = ToolCard(name, str(spec.get("description", "")), {"type": "object", **spec})
    values = {k: v for k, (v, _) in _found(inner, task, facts).items()}
    return (values, "values in the task") if values else (None, "")
