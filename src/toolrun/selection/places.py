"""Where a city is, for step 5 to write it the way a parameter asks: "Boston" as "Boston,
MA" (or "Boston, Massachusetts"), "Riga" as "Riga, Latvia". From a gazetteer of the
world's cities of 100,000 people or more and US cities of 30,000 or more, under each
name the most populous, no name that is a country's or a US state's (`places.json`:
GeoNames' data, CC BY 4.0, built by scripts/build_places.py)."""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

PLACES_FILE = "places.json"
# Short names of countries that GeoNames does not give, with their codes.
_COUNTRY_CODES = {"usa": "US", "us": "US", "u.s.": "US", "u.s.a.": "US", "uk": "GB", "uae": "AE"}
_COUNTRY_ALIASES = frozenset(_COUNTRY_CODES)


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
    in_us: dict[str, str] = field(default_factory=dict)  # … the US city's where another wins
    _regions: frozenset[str] = field(init=False, repr=False, compare=False)
    _state_codes: dict[str, str] = field(init=False, repr=False, compare=False)
    _country_codes: dict[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [*self.countries.values(), *self.states.values()]
        regions = frozenset(fold(n) for n in names) | _COUNTRY_ALIASES
        object.__setattr__(self, "_regions", regions)
        codes = {fold(name): code for code, name in self.states.items()}
        object.__setattr__(self, "_state_codes", codes)
        countries = {fold(name): code for code, name in self.countries.items()}
        object.__setattr__(self, "_country_codes", countries | _COUNTRY_CODES)

    def region(self, city: str, *, abbreviated: bool, in_us: bool = False) -> str | None:
        """What follows `city` after a comma: its US state (the code if `abbreviated`,
        else the name) or its country's name; None for a city it does not know. `in_us`:
        a US city of that name first ("Santa Clara, CA", not Cuba's)."""
        folded = fold(city)
        where = (in_us and self.in_us.get(folded)) or self.cities.get(folded)
        if where is None:
            return None
        if where.startswith("US-"):
            return self.state_name(where[3:], abbreviated=abbreviated)
        return self.countries.get(where)

    def state_of(self, city: str) -> str | None:
        """The code of the US state `city` is in; None for a city elsewhere or unknown."""
        where = self.cities.get(fold(city), "")
        return where[3:] if where.startswith("US-") else None

    def state_code(self, name: str) -> str | None:
        """The code of the US state `name` names ("OH", "Ohio"); None for another name."""
        if name in self.states:
            return name
        return self._state_codes.get(fold(name))

    def country_code(self, name: str) -> str | None:
        """The ISO 3166-1 alpha-2 code of the country `name` names ("Germany", "UK",
        "DE"); None for another name."""
        if name in self.countries:
            return name
        return self._country_codes.get(fold(name))

    def state_name(self, code: str, *, abbreviated: bool) -> str:
        """A US state as a parameter asks: its code, or its name."""
        return code if abbreviated else self.states.get(code, code)

    def is_region(self, name: str) -> bool:
        """A country or a US state, by name or code ("Ohio", "OH", "Latvia", "USA")."""
        return name in self.states or fold(name) in self._regions

    def knows(self, name: str) -> bool:
        """A city, a US state or a country."""
        return fold(name) in self.cities or self.is_region(name)


@cache
def gazetteer() -> Gazetteer:
    """The shipped gazetteer (read once)."""
    text = resources.files("toolrun.selection").joinpath(PLACES_FILE).read_text(encoding="utf-8")
    found = json.loads(text)
    return Gazetteer(found["cities"], found["countries"], found["states"], found["in_us"])
