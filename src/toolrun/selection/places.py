"""Where a city is, for step 5 to write it the way a parameter asks: "Boston" as "Boston,
MA" (or "Boston, Massachusetts"), "Riga" as "Riga, Latvia". From a gazetteer of the
world's cities of 100,000 people or more and US cities of 30,000 or more, under each
name the most populous (`places.json`: GeoNames' data, CC BY 4.0, built by
bench/places.py)."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources

PLACES_FILE = "places.json"


def fold(name: str) -> str:
    """`name` as the gazetteer keys it: lowercase, accents aside, spaces single
    ("Lạng Sơn" → "lang son")."""
    decomposed = unicodedata.normalize("NFKD", name.replace("đ", "d").replace("Đ", "D"))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.lower().split())


@dataclass(frozen=True)
class Gazetteer:
    cities: dict[str, str]  # folded name → country code, or US-<state code>
    countries: dict[str, str]  # code → name
    states: dict[str, str]  # US state code → name

    def region(self, city: str, *, abbreviated: bool) -> str | None:
        """What follows `city` after a comma: its US state (the code if `abbreviated`,
        else the name) or its country's name; None for a city it does not know."""
        where = self.cities.get(fold(city))
        if where is None:
            return None
        if where.startswith("US-"):
            state = where[3:]
            return state if abbreviated else self.states.get(state, state)
        return self.countries.get(where)

    def state_of(self, city: str) -> str | None:
        """The code of the US state `city` is in; None for a city elsewhere or unknown."""
        where = self.cities.get(fold(city), "")
        return where[3:] if where.startswith("US-") else None

    def is_state(self, name: str) -> bool:
        """A US state's name or code ("Ohio", "OH")."""
        return name in self.states or fold(name) in self._state_names

    @cached_property
    def _state_names(self) -> frozenset[str]:
        return frozenset(fold(state) for state in self.states.values())


@cache
def gazetteer() -> Gazetteer:
    """The shipped gazetteer (read once)."""
    text = resources.files("toolrun.selection").joinpath(PLACES_FILE).read_text(encoding="utf-8")
    found = json.loads(text)
    return Gazetteer(found["cities"], found["countries"], found["states"])
