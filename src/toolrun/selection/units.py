"""Unit parameters for step 5 (`arguments`): the unit a task asks for its answer ("the
speed in km/h" for to_unit), the unit it writes a named parameter's number in ("a
radius of 4 inches" for "the unit of measurement for the radius"), and both sides of a
conversion ("How many teaspoons are in 2 tablespoons": from tablespoons to teaspoons);
and what a measure is of ("2 pounds of butter" for an item)."""

from __future__ import annotations

import re
from itertools import takewhile
from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.numbering import kind, name_words
from toolrun.selection.numerals import Number
from toolrun.selection.options import listed
from toolrun.selection.text import STOP_WORDS, split_words, stem
from toolrun.selection.unitsizes import unit_of

# A unit the task asks for, not one a number is written in ("in km/h", "into grams/mole").
_ASKED_IN = re.compile(r"\b(?:in|into)\s+([A-Za-z]+(?:/[A-Za-z]+)?)\b(?!/)")
_WORD = re.compile(r"(?<![\w/])([A-Za-z]+(?:/[A-Za-z]+)?)(?![\w/])")
_UNIT = stem("unit")
# "2 pounds of butter", "100g of water": what a measure is of (one run of digits read
# once: the look-behind starts it at its first digit).
_MEASURE_OF = re.compile(
    r"(?<![\d.,])\d[\d.,]*[ \t]*(?P<unit>[A-Za-z]+)[ \t]+of[ \t]+(?:the[ \t]+)?"
    r"(?P<stuff>[a-z]+(?:[ \t]+[a-z]+)?)"
)
# A text parameter for what is measured (its name's words as written).
_STUFF = frozenset({"item", "ingredient", "food", "substance", "material", "product"})
_NOT_STUFF = frozenset({"id", "ids", "code", "number", "type", "count"})


def unit_parameters(
    names: list[str], card: ToolCard, task: str, written_numbers: list[Number]
) -> dict[str, tuple[Any, str]]:
    """A value for each text parameter of `names` named for a unit (unit, to_unit,
    from_unit) that the task gives one: the from side takes the unit a number is written
    in, the to side the unit the task asks for ("in miles"), else another unit it names;
    a plain unit whose description names a numeric parameter ("for the radius") the unit
    that parameter's number is written in, else the unit asked for. Written as the
    description lists it ("tablespoon" for "2 tablespoons"); each unit given once.
    `written_numbers`: the task's numbers (`facts.numbers` before any was taken)."""
    units = [n for n in names if _UNIT in name_words(n) and "enum" not in card.properties[n]]
    if not units:
        return {}
    counted = [n for n in written_numbers if unit_of(n.unit)]
    asked = [m[1] for m in _ASKED_IN.finditer(task) if unit_of(m[1].split("/", 1)[0])]
    found: dict[str, tuple[Any, str]] = {}
    for name in units:
        own, description = set(split_words(name)), str(card.properties[name].get("description", ""))
        if "from" in own:
            choices = [n.unit for n in counted[:1]]
        elif "to" in own:
            choices = [*asked, *_other_units(task, counted)]
        else:
            choices = [*_measured_in(card, name, counted), *asked]
        given = {str(value).lower() for value, _ in found.values()}
        for written in choices:
            value = _as_listed(written, description)
            if value is not None and value.lower() not in given:
                found[name] = (value, "unit in the task")
                break
    return found


def _other_units(task: str, counted: list[Number]) -> list[str]:
    """The units the task names that no number is written in ("How many ounces in 2
    pounds": ounces; "5 miles to km": km)."""
    taken = {unit_of(n.unit) for n in counted}
    return [
        match[1]
        for match in _WORD.finditer(task)
        if len(match[1]) > 1
        and match[1].lower() != "in"
        and (found := unit_of(match[1])) is not None
        and found not in taken
    ]


def _measured_in(card: ToolCard, name: str, counted: list[Number]) -> list[str]:
    """The unit the number of the numeric parameter that `name`'s description names is
    written in ("The unit of measurement for the radius": "a radius of 4 inches")."""
    described = name_words(str(card.properties[name].get("description", "")))
    for other, spec in card.properties.items():
        words = name_words(other)
        if other == name or kind(spec) not in ("integer", "number") or not words <= described:
            continue
        near = [n for n in counted if words & set(n.before[-3:])]
        if near:
            return [near[0].unit]
    return []


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
    """What a measure the task writes is of ("2 pounds of butter": butter; "3 pounds of
    ground beef": ground beef; not "3 hours of running", a span of time) to the first
    text parameter of `names` whose name has the word item, ingredient, food, substance,
    material or product (not product_id)."""
    wanted = [
        n
        for n in names
        if (words := set(split_words(n))) & _STUFF
        and not words & _NOT_STUFF
        and "enum" not in card.properties[n]
    ]
    if not wanted:
        return {}
    for match in _MEASURE_OF.finditer(task):
        unit = unit_of(match["unit"])
        if unit is None or unit[0] == "time":
            continue
        stuff = list(takewhile(lambda word: word not in STOP_WORDS, match["stuff"].split()))
        if stuff:
            return {wanted[0]: (" ".join(stuff), "what a measure in the task is of")}
    return {}
