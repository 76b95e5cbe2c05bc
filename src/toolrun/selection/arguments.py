"""Step 5 of selection: argument values for the chosen tool from the task's words
(`facts`) and a supplied context — quoted strings, numbers (by the words around them,
units dropped), paths, URLs, dates, literal lists, identifiers, enum values, booleans,
schema defaults — checked against the tool's schema, with missing required parameters
named."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.facts import Facts, Number
from toolrun.selection.text import STOP_WORDS, split_words, stem
from toolrun.tools.validation import argument_errors

# A description saying a rate is given as a decimal: "5%" is then 0.05.
_AS_DECIMAL = re.compile(r"as a decimal|\bfraction\b|(?:from|between) 0 (?:to|and) 1\b", re.I)
_NEGATION = frozenset({"no", "not", "without", "don't", "never", "disable", "exclude"})
# Parameter words that take the start, and the length, of a "10 to 20" range.
_START = frozenset({"offset", "start", "begin", "from", "first"})
_COUNT = frozenset({"limit", "count", "length", "size", "max", "number", "num", "n"})
# Words before a number that make it a count ("the first 20 lines").
_COUNTING = frozenset({"first", "top", "last"})
_PATH_WORDS = frozenset({"path", "file", "filename", "directory", "folder", "dir"})
_OLD = frozenset({"old", "original", "find", "search", "source"})
_NEW = frozenset({"new", "replacement", "replace", "target"})


@dataclass
class Filled:
    """Step 5's answer: the arguments, where each came from, and what is missing."""

    arguments: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.missing and not self.errors


def fill(card: ToolCard, task: str, context: dict[str, Any] | None = None) -> Filled:
    """Arguments for `card` from `task` and `context` (values by parameter name win);
    a required parameter the task leaves open takes its schema default."""
    facts = Facts.of(task)
    facts.identifiers = [found for found in facts.identifiers if found not in card.properties]
    context = context or {}
    filled = Filled({})
    order = card.required + [p for p in card.properties if p not in card.required]
    numbers = _assign_numbers(card, facts)
    for name in order:
        spec = card.properties[name]
        if name in context:
            filled.arguments[name], filled.sources[name] = context[name], "context"
            continue
        value, source = _value(name, spec, task, facts, numbers)
        if value is None and name in card.required and "default" in spec:
            value, source = spec["default"], "default"
        if value is not None:
            filled.arguments[name], filled.sources[name] = value, source
        elif name in card.required:
            filled.missing.append(name)
    problems = argument_errors(card.validator, filled.arguments)
    if problems:
        filled.errors.append(problems)
    return filled


def checked(
    card: ToolCard, arguments: dict[str, Any], context: dict[str, Any], source: str
) -> Filled:
    """`arguments` found some other way (a model) with `context` over them, checked like
    `fill`'s."""
    values = {**arguments, **{k: v for k, v in context.items() if k in card.properties}}
    filled = Filled(
        values,
        sources={name: "context" if name in context else source for name in values},
        missing=[name for name in card.required if name not in values],
    )
    problems = argument_errors(card.validator, values)
    if problems:
        filled.errors.append(problems)
    return filled


def _kind(spec: dict[str, Any]) -> str:
    kind = spec.get("type", "string")
    return kind[0] if isinstance(kind, list) and kind else str(kind)


def _name_words(name: str) -> set[str]:
    """The stems of a parameter name's words (digits and stop words aside)."""
    found = [w for w in split_words(name) if not w.isdigit()]
    return {stem(w) for w in [w for w in found if w not in STOP_WORDS] or found}


def _assign_numbers(card: ToolCard, facts: Facts) -> dict[str, tuple[float | int, str]]:
    """Numbers to numeric parameters: a "10 to 20" range to a start and a count; then a
    number named by a parameter's name just before it, or just after it, or by a unit
    its description names ("5 seconds"); the rest in order to required parameters."""
    specs = card.properties
    names = [p for p in specs if _kind(specs[p]) in ("integer", "number")]
    words = {name: _name_words(name) for name in names}
    chosen, left = _range(names, words, facts)
    before = {n: words[n] | (_COUNTING if words[n] & _COUNT else set()) for n in names}
    units = {n: {stem(w) for w in split_words(str(specs[n].get("description", "")))} for n in names}
    for hints, side in ((before, "before"), (words, "after"), (units, "after")):
        for name in [n for n in names if n not in chosen]:
            number = next((n for n in left if hints[name] & set(getattr(n, side))), None)
            if number is not None:
                chosen[name] = (_scaled(number, specs[name]), "number in the task")
                left.remove(number)
    for name in names:
        if name not in chosen and name in card.required and left:
            chosen[name] = (_scaled(left.pop(0), specs[name]), "number in the task")
    facts.numbers[:] = left
    return {
        name: (value, source)
        for name, (found, source) in chosen.items()
        if (value := _as_kind(found, specs[name])) is not None
    }


def _range(
    names: list[str], words: dict[str, set[str]], facts: Facts
) -> tuple[dict[str, tuple[float | int, str]], list[Number]]:
    """A "10 to 20" range as a start and a count (10 and 11), where the tool takes both."""
    start = next((n for n in names if words[n] & _START), None)
    count = next((n for n in names if words[n] & _COUNT), None)
    if not (facts.range and start and count):
        return {}, list(facts.numbers)
    first, last = facts.range
    left = [n for n in facts.numbers if n.value not in (first, last)]
    return {
        start: (first, "range in the task"),
        count: (last - first + 1, "range in the task"),
    }, left


def _as_kind(value: float | int, spec: dict[str, Any]) -> float | int | None:
    """`value` as the parameter's kind: None for a fraction an integer cannot take."""
    if _kind(spec) != "integer":
        return value
    return int(value) if float(value).is_integer() else None


def _scaled(number: Number, spec: dict[str, Any]) -> float | int:
    """A percentage as a decimal where the description asks for one ("5%" → 0.05)."""
    if number.percent and _AS_DECIMAL.search(str(spec.get("description", ""))):
        return round(number.value / 100, 10)
    return number.value


def _value(
    name: str,
    spec: dict[str, Any],
    task: str,
    facts: Facts,
    numbers: dict[str, tuple[float | int, str]],
) -> tuple[Any, str]:
    kind = _kind(spec)
    if "enum" in spec:
        return _option(spec["enum"], task)
    if kind in ("integer", "number"):
        return numbers.get(name, (None, ""))
    if kind == "boolean":
        return _flag(name, task)
    if kind == "array":
        return _array(spec, facts)
    if kind != "string":
        return None, ""
    return _text(name, spec, facts)


def _text(name: str, spec: dict[str, Any], facts: Facts) -> tuple[Any, str]:
    """A string: the kind of value its name or description asks for, else the first
    quoted string, identifier or capitalised name left (a path parameter: no name)."""
    own = set(split_words(name))
    words = own | set(split_words(str(spec.get("description", ""))[:60]))
    if facts.pair and own & (_OLD | _NEW):
        return facts.pair[0 if own & _OLD else 1], "what to replace in the task"
    if words & {"url", "link", "website", "endpoint"} and facts.urls:
        return facts.urls.pop(0), "URL in the task"
    if words & {"pattern", "glob"} and facts.patterns:
        return facts.patterns.pop(0), "pattern in the task"
    if words & _PATH_WORDS and facts.paths:
        return facts.paths.pop(0), "path in the task"
    if words & {"date", "day", "when", "time"} and facts.dates:
        return facts.dates.pop(0), "date in the task"
    if facts.quoted:
        return facts.quoted.pop(0), "quoted in the task"
    if own & _PATH_WORDS:  # a path parameter takes no identifier or name
        return None, ""
    if facts.identifiers:
        return facts.identifiers.pop(0), "identifier in the task"
    if facts.names:
        return facts.names.pop(0), "name in the task"
    return None, ""


def _option(options: list[Any], task: str) -> tuple[Any, str]:
    """The enum value the task names, as written or by its stem ("defined" →
    "definition")."""
    lowered = task.lower()
    for option in options:
        if str(option).lower() in lowered:
            return option, "enum value in the task"
    stems = {stem(w) for w in split_words(task)}
    for option in options:
        wanted = [stem(w) for w in split_words(str(option))]
        if wanted and all(any(_alike(w, s) for s in stems) for w in wanted):
            return option, "enum value in the task (by its stem)"
    return None, ""


def _alike(one: str, other: str) -> bool:
    """Stems of one word: equal, or one (of 5 letters or more) begins the other."""
    short, long = sorted((one, other), key=len)
    return short == long or (len(short) >= 5 and long.startswith(short))


def _flag(name: str, task: str) -> tuple[Any, str]:
    """True where the task says the parameter's name ("include hidden files" →
    include_hidden), False where a negation comes just before it."""
    wanted = {stem(w) for w in split_words(name) if len(w) > 1 and not w.isdigit()}
    said = [stem(w) for w in split_words(task.replace("n't", " not"))]
    places = [i for i, w in enumerate(said) if w in wanted]
    if not wanted or not wanted <= {said[i] for i in places}:
        return None, ""
    negated = _NEGATION & set(said[max(places[0] - 3, 0) : places[0]])
    return (False, "negated in the task") if negated else (True, "named in the task")


def _array(spec: dict[str, Any], facts: Facts) -> tuple[Any, str]:
    """A literal list of the right kind of items, else the numbers no other parameter
    took (once)."""
    numeric = _kind(spec.get("items") or {}) in ("integer", "number")
    for items in facts.lists:
        if all(isinstance(i, int | float) and not isinstance(i, bool) for i in items) == numeric:
            facts.lists.remove(items)
            return items, "list in the task"
    if numeric and facts.numbers:
        values = [number.value for number in facts.numbers]
        facts.numbers.clear()
        return values, "numbers in the task"
    return None, ""
