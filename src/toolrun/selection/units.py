"""Unit parameters for step 5 (`arguments`): the unit a task asks for its answer ("the
speed in km/h" for to_unit), the unit it writes a named parameter's number in ("a
radius of 4 inches" for "the unit of measurement for the radius"), and both sides of a
conversion ("How many teaspoons are in 2 tablespoons": from tablespoons to teaspoons);
and what a measure is of ("2 pounds of butter" for an item)."""

from __future__ import annotations

import re
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.numbering import kind, name_words, unit_of
from toolrun.selection.numerals import Number, numbers
from toolrun.selection.options import listed
from toolrun.selection.text import split_words, stem

# A unit the task asks for, not one a number is written in ("in km/h", "into grams/mole").
_ASKED_IN = re.compile(r"\b(?:in|into)\s+([A-Za-z]+(?:/[A-Za-z]+)?)\b(?!/)")
_WORD = re.compile(r"(?<![\w/])([A-Za-z]+(?:/[A-Za-z]+)?)(?![\w/])")
_UNIT = stem("unit")
# "2 pounds of butter", "100g of water": what a measure is of, up to a word that goes on.
_MEASURE_OF = re.compile(
    r"\d(?:[\d.,]*\d)?[ \t]*(?P<unit>[A-Za-z]+)[ \t]+of[ \t]+(?:the[ \t]+)?"
    r"(?P<stuff>[a-z]+(?:[ \t]+(?!(?:to|into|in|from|for|at|with|and|or|per)\b)[a-z]+){0,2})"
)
# A text parameter for what is measured.
_STUFF = frozenset({"item", "ingredient", "food", "substance", "material", "product"})


def unit_parameters(names: list[str], card: ToolCard, task: str) -> dict[str, tuple[Any, str]]:
    """A value for each text parameter of `names` named for a unit (unit, to_unit,
    from_unit) that the task gives one: the from side takes the unit a number is written
    in, the to side and a plain unit the unit the task asks for ("in miles"), else (the
    to side) another unit it names; a plain unit whose description names a numeric
    parameter ("for the radius") takes the unit that parameter's number is written in.
    Written as the description lists it ("tablespoon" for "2 tablespoons")."""
    units = [n for n in names if _UNIT in name_words(n) and "enum" not in card.properties[n]]
    if not units:
        return {}
    counted = [n for n in numbers(task) if unit_of(n.unit)]
    asked = [m[1] for m in _ASKED_IN.finditer(task) if unit_of(m[1].split("/", 1)[0])]
    found: dict[str, tuple[Any, str]] = {}
    for name in units:
        own, description = set(split_words(name)), str(card.properties[name].get("description", ""))
        written: str | None = None
        if "from" in own:
            written = counted[0].unit if counted else None
        elif "to" in own:
            written = next(iter(asked), None) or _other_unit(task, counted)
        else:
            written = next(iter(asked), None) or _measured_in(card, name, counted)
        value = _as_listed(written, description) if written else None
        if value is not None:
            found[name] = (value, "unit in the task")
    return found


def _other_unit(task: str, counted: list[Number]) -> str | None:
    """A unit the task names that no number is written in ("How many ounces in 2
    pounds": ounces)."""
    taken = {unit_of(n.unit) for n in counted}
    for match in _WORD.finditer(task):
        word = match[1]
        if len(word) > 2 and (found := unit_of(word)) is not None and found not in taken:
            return word
    return None


def _measured_in(card: ToolCard, name: str, counted: list[Number]) -> str | None:
    """The unit the number of the numeric parameter that `name`'s description names is
    written in ("The unit of measurement for the radius": "a radius of 4 inches")."""
    described = name_words(str(card.properties[name].get("description", "")))
    for other, spec in card.properties.items():
        words = name_words(other)
        if other == name or kind(spec) not in ("integer", "number") or not words <= described:
            continue
        near = [n for n in counted if words & set(n.before[-3:])]
        if near:
            return near[0].unit
    return None


def _as_listed(written: str, description: str) -> str | None:
    """`written` as the description lists that unit ("tablespoon" for "tablespoons");
    as written where it lists none of it, but none where it lists only values that are
    no units ("'imperial' or 'metric'")."""
    options = listed(description)
    found = unit_of(written.split("/", 1)[0])
    same = [o for o in options if "/" not in written and unit_of(o) == found]
    if same:
        return same[0]
    if len(options) > 1 and not any(unit_of(o.split("/", 1)[0]) for o in options):
        return None
    return written


def measured(names: list[str], card: ToolCard, task: str) -> dict[str, tuple[Any, str]]:
    """What a measure the task writes is of ("2 pounds of butter": butter) to the first
    text parameter of `names` named for an item, ingredient, food or substance."""
    wanted = [n for n in names if set(split_words(n)) & _STUFF and "enum" not in card.properties[n]]
    if not wanted:
        return {}
    for match in _MEASURE_OF.finditer(task):
        if unit_of(match["unit"]):
            return {wanted[0]: (match["stuff"], "what a measure in the task is of")}
    return {}
