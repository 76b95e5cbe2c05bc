"""Currencies a task names — "150 Euros", "US dollars", "GBP", "$" — as ISO 4217 codes,
each with the side of a conversion the words before it put it on ("from", "to"), for a
currency parameter of step 5 ("from_currency", "target_currency", "currency")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Side = Literal["from", "to"] | None

# What a currency is called, lowercase, singular (a plural "s" or "es" is read too); a
# name that is also a common word ("won", "real", "crown") only with its country's.
_NAMES: dict[str, str] = {
    "us dollar": "USD",
    "u.s. dollar": "USD",
    "american dollar": "USD",
    "dollar": "USD",
    "buck": "USD",
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
    "rmb": "CNY",
    "indian rupee": "INR",
    "rupee": "INR",
    "swiss franc": "CHF",
    "franc": "CHF",
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
    "rand": "ZAR",
    "polish zloty": "PLN",
    "zloty": "PLN",
    "bitcoin": "BTC",
}
_PLURALS = {"swedish krona": "swedish kronor", "norwegian krone": "norwegian kroner"}
_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR"}
# The codes read as written (upper case), beyond those the names give.
_CODES = frozenset(_NAMES.values()) | {"SEK", "NOK", "DKK", "HUF", "CZK", "ILS", "THB", "AED"}

_NAMED = re.compile(
    r"(?<![\w.])(?:"
    + "|".join(
        r"\s+".join(re.escape(word) for word in name.split()) + r"(?:e?s)?"
        for name in sorted([*_NAMES, *_PLURALS.values()], key=len, reverse=True)
    )
    + r")(?!\w)",
    re.IGNORECASE,
)
_CODED = re.compile(r"(?<![\w$€£¥₹])(?:[A-Z]{3})(?!\w)|[$€£¥₹]")
# Words before a currency that put it on one side: "from euros", "convert 200 dollars",
# "to yen", "into pounds", "in British pounds" (what a cost is asked in).
_FROM = frozenset({"from", "convert", "converting", "exchange", "exchanging", "sell", "selling"})
_TO = frozenset({"to", "into", "in", "buy", "buying"})
_BEFORE = 3  # words looked at before a currency (an amount between is skipped)
_WORD = re.compile(r"[\w.]+")


@dataclass(frozen=True)
class Mention:
    """A currency the task names: its code, the side of a conversion the words before it
    say (None: they say neither), and where it starts in the task."""

    code: str
    side: Side
    start: int
    text: str  # as written


def mentions(task: str) -> list[Mention]:
    """The currencies `task` names, in order; a sign next to a named or coded one ("$200
    USD") counts once."""
    found: dict[int, tuple[str, int]] = {}  # start → (code, end)
    for match in _NAMED.finditer(task):
        found[match.start()] = (_code_of(match[0]), match.end())
    for match in _CODED.finditer(task):
        text = match[0]
        code = _SIGNS.get(text) or (text if text in _CODES else None)
        if code is not None and not _inside(found, match.start()):
            found[match.start()] = (code, match.end())
    ordered = sorted(found.items())
    kept: list[Mention] = []
    for start, (code, end) in ordered:
        if kept and kept[-1].code == code and _adjacent(task, ordered, kept[-1].start, start):
            continue  # "$200 USD", "€ 5 euros": one currency
        kept.append(Mention(code, _side(task[:start]), start, task[start:end]))
    return kept


def chosen(parameter_words: frozenset[str], found: list[Mention]) -> Mention | None:
    """The mention a currency parameter named by `parameter_words` takes: the one on its
    side ("from_currency", "base_currency" / "to_currency", "target_currency"), else the
    first (its side's first by order, the source before the target)."""
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
    if wanted == "to" and not any(m.side == "to" for m in found) and len(unsided) > 1:
        return unsided[1]  # "150 euros, canadian dollars": the second is the target
    others = [m for m in found if m.side != _other(wanted)]
    return others[0] if others else None


def _other(side: Side) -> Side:
    return "to" if side == "from" else "from"


def _code_of(written: str) -> str:
    name = re.sub(r"\s+", " ", written.lower())
    for plural, singular in ((p, s) for s, p in _PLURALS.items()):
        if name == plural:
            return _NAMES[singular]
    if name in _NAMES:
        return _NAMES[name]
    for ending in ("es", "s"):
        if name.endswith(ending) and name[: -len(ending)] in _NAMES:
            return _NAMES[name[: -len(ending)]]
    raise ValueError(f"not a currency name: {written!r}")  # the pattern matched only names


def _inside(found: dict[int, tuple[str, int]], place: int) -> bool:
    return any(start <= place < end for start, (_code, end) in found.items())


def _adjacent(task: str, ordered: list[tuple[int, tuple[str, int]]], first: int, then: int) -> bool:
    """Only an amount stands between the mention at `first` and the one at `then`."""
    end = dict(ordered)[first][1]
    between = task[end:then]
    return bool(re.fullmatch(r"\s*[\d.,]*\s*", between))


def _side(before: str) -> Side:
    """The side the words before a currency put it on: the nearest telling word among the
    last few, an amount skipped ("convert 200 US dollars")."""
    words = [w.lower() for w in _WORD.findall(before)]
    for word in reversed(words[-_BEFORE:]):
        if word in _FROM:
            return "from"
        if word in _TO:
            return "to"
    return None
