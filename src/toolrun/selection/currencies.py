"""Currencies a task names — "150 Euros", "US dollars", "GBP", "$" — as ISO 4217 codes,
each with the side of a conversion the words before it put it on ("from", "to"), for a
currency parameter of step 5 ("from_currency", "target_currency", "currency")."""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass
from typing import Literal

Side = Literal["from", "to"] | None

# What a currency is called, lowercase, singular; a name that is also a common word or a
# person's ("won", "real", "rand", "franc", "buck") only with its country's.
_NAMES: dict[str, str] = {
    "us dollar": "USD",
    "u.s. dollar": "USD",
    "american dollar": "USD",
    "dollar": "USD",
    "canadian dollar": "CAD",
    "australian dollar": "AUD",
    "new zealand dollar": "NZD",
    "hong kong dollar": "HKD",
    "singapore dollar": "SGD",
    "euro": "EUR",
    "british pound": "GBP",
    "pound sterling": "GBP",
    "sterling": "GBP",
    "pound": "GBP",
    "japanese yen": "JPY",
    "yen": "JPY",
    "chinese yuan": "CNY",
    "yuan": "CNY",
    "renminbi": "CNY",
    "indian rupee": "INR",
    "rupee": "INR",
    "swiss franc": "CHF",
    "mexican peso": "MXN",
    "peso": "MXN",
    "brazilian real": "BRL",
    "south korean won": "KRW",
    "korean won": "KRW",
    "russian ruble": "RUB",
    "ruble": "RUB",
    "rouble": "RUB",
    "swedish krona": "SEK",
    "norwegian krone": "NOK",
    "danish krone": "DKK",
    "turkish lira": "TRY",
    "south african rand": "ZAR",
    "polish zloty": "PLN",
    "zloty": "PLN",
}
# Plurals not made with "s": the irregular ones, and those of names of two words whose
# first takes the "s" ("pounds sterling").
_IRREGULAR = {
    "swedish kronor": "SEK",
    "norwegian kroner": "NOK",
    "danish kroner": "DKK",
    "pounds sterling": "GBP",
}
# Every way a currency is written, lowercase, its words one space apart: each name, its
# plural in "s" and the irregular ones.
_WRITTEN: dict[str, str] = {
    **{f"{name}s": code for name, code in _NAMES.items()},
    **_NAMES,
    **_IRREGULAR,
}
_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
# The codes read as written (upper case): not "TRY", a word written in capitals too.
_CODES = frozenset(_WRITTEN.values()) - {"TRY"} | {"NOK", "DKK", "HUF", "CZK", "ILS", "AED"}

_NAMED = re.compile(
    r"(?<![\w.])(?:"
    + "|".join(
        r"\s+".join(re.escape(word) for word in name.split())
        for name in sorted(_WRITTEN, key=len, reverse=True)
    )
    + r")(?!\w)",
    re.IGNORECASE | re.ASCII,
)
# The last word of every name and irregular plural: a task that holds none of them
# names no currency, and the long pattern above is not run on it (selection parses
# every task; a substring test of each is a tenth of one pass of a pattern).
_LAST_WORDS = tuple(sorted({name.split()[-1] for name in (*_NAMES, *_IRREGULAR)}))
_WEIGHT = re.compile(r"pounds?\s+of\b", re.IGNORECASE | re.ASCII)  # "100 pounds of flour"
_CODED = re.compile(r"(?<![A-Za-z$€£¥₹])[A-Z]{3}(?![A-Za-z])|[$€£¥₹]")
# Words before a currency that put it on one side: "from euros", "convert 200 dollars",
# "to yen", "into pounds", "how many Canadian dollars" (what is got: "many" right after
# "how"); "in British pounds" (what a cost is asked in) only where no other word says
# which currency is the target.
_FROM = frozenset({"from", "convert", "converting", "exchange", "exchanging", "sell", "selling"})
_TO = frozenset({"to", "into", "buy", "buying"})
_HOW_MANY = ["how", "many"]
_WEAK_TO = "in"
_BEFORE = 3  # words looked at before a currency (an amount between is skipped)
_WORD = re.compile(r"[\w.]+")


@dataclass(frozen=True)
class Mention:
    """A currency the task names: its code, the side of a conversion the words before it
    say (None: they say neither), where it starts in the task, and how it is written."""

    code: str
    side: Side
    start: int
    text: str


def mentions(task: str) -> list[Mention]:
    """The currencies `task` names, in order; a sign next to a named or coded one ("$200
    USD") counts once."""
    found: dict[int, tuple[str, int]] = {}  # start → (code, end)
    lowered = task.lower()
    named = _NAMED.finditer(task) if any(w in lowered for w in _LAST_WORDS) else ()
    for match in named:
        if not _WEIGHT.match(task, match.start()):
            found[match.start()] = (_WRITTEN[" ".join(match[0].lower().split())], match.end())
    starts, ends = list(found), [end for _code, end in found.values()]  # in order
    for match in _CODED.finditer(task):
        text = match[0]
        code = _SIGNS.get(text) or (text if text in _CODES else None)
        if code is not None and not _inside(starts, ends, match.start()):
            found[match.start()] = (code, match.end())
    kept: list[Mention] = []
    weak: list[int] = []  # the places in `kept` of those "in" put on the "to" side
    after = 0  # where the mention before ends: a side is said after it
    for start, (code, end) in sorted(found.items()):
        if kept and kept[-1].code == code and re.fullmatch(r"[\s\d.,]*", task[after:start]):
            after = end
            continue  # "$200 USD", "€ 5 euros": one currency
        side, word = _side(task[after:start])
        if word == _WEAK_TO:
            weak.append(len(kept))
        kept.append(Mention(code, side, start, task[start:end]))
        after = end
    if sum(m.side == "to" for m in kept) > 1:  # "the price in euros to dollars"
        for place in weak:
            kept[place] = dataclasses.replace(kept[place], side=None)
    return kept


def chosen(parameter_words: frozenset[str], found: list[Mention]) -> Mention | None:
    """The mention a currency parameter named by `parameter_words` takes: the one on its
    side ("from_currency", "base_currency" / "to_currency", "target_currency"), else one
    no word puts on the other side (the first for the source, the second of two for the
    target); a parameter that names no side takes the first."""
    if not found:
        return None
    if parameter_words & {"from", "base", "source", "origin", "sell", "input"}:
        wanted: Side = "from"
    elif parameter_words & {"to", "target", "destination", "quote", "buy", "output", "into"}:
        wanted = "to"
    else:
        return found[0]
    sided = [m for m in found if m.side == wanted]
    if sided:
        return sided[0]
    unsided = [m for m in found if m.side is None]
    if wanted == "to" and len(unsided) > 1 and not any(m.side == "from" for m in found):
        return unsided[1]  # "between USD and EUR": the second is the target
    return unsided[0] if unsided else None


def _inside(starts: list[int], ends: list[int], place: int) -> bool:
    """Whether `place` is inside one of the spans (in order, apart) that start and end
    at `starts` and `ends`."""
    last = bisect.bisect_right(starts, place) - 1
    return last >= 0 and place < ends[last]


def _side(before: str) -> tuple[Side, str | None]:
    """The side the words before a currency put it on, with the word that says it: the
    nearest telling word among the last few, an amount skipped ("convert 200 US
    dollars")."""
    words = [w.lower() for w in _WORD.findall(before)]
    for at in range(len(words) - 1, max(len(words) - _BEFORE, 0) - 1, -1):
        word = words[at]
        if word in _FROM:
            return "from", word
        if word in _TO or word == _WEAK_TO or words[at - 1 : at + 1] == _HOW_MANY:
            return "to", word
    return None, None
