"""Step 5 for places: which name a place parameter takes ("in Oslo", "from Rome" for an
origin), a street address for an address parameter, a "City, State" value written as
the parameter's description shows it (as the task writes it, else with the city's state
or country from the gazetteer, `places`), the place an address is in for a parameter
that takes no address, and a state parameter's value from an address or a city the
task names."""

from __future__ import annotations

import functools
import re

from toolrun.selection.facts import Facts
from toolrun.selection.numbering import name_words
from toolrun.selection.places import fold, gazetteer
from toolrun.selection.text import split_words, stem

# A name, a comma and another: "San Francisco, CA", "City, State", or two of a list
# (at most five words each: linear on a long run of capitalised words).
_TWO_NAMES = re.compile(
    r"\b([A-Z][a-z]+(?: [A-Z][a-z]+){0,4}), ([A-Z][A-Za-z]*(?: [A-Z][a-z]+){0,4})"
)
_CODE = re.compile(r"[A-Z]{2}")  # "MA", "BC": a region's code
_LIST_GOES_ON = re.compile(r",\s*(?:and\s+|or\s+)?[A-Z]")
# Words a description writes for the parts of a place's form ("in the format 'City, State'").
_PLACE_PARTS = frozenset(
    {"City", "State", "Country", "Province", "Location", "District", "Region", "Address"}
)
# … one showing a state's code: "San Francisco, CA", "State (abbr)", "two-letter".
_ABBREVIATED = re.compile(
    r"\b[A-Z][a-z]+(?: [A-Z][a-z]+){0,4}, [A-Z]{2}\b|(?i:\(abbr|two-letter|state code)"
)
_COUNTRY = stem("country")
# A people's or language's adjective, for the country a country parameter asks for.
_DEMONYMS = {
    "German": "Germany",
    "French": "France",
    "Spanish": "Spain",
    "Italian": "Italy",
    "Chinese": "China",
    "Japanese": "Japan",
    "Russian": "Russia",
    "Indian": "India",
    "Brazilian": "Brazil",
    "Mexican": "Mexico",
    "Canadian": "Canada",
    "Australian": "Australia",
    "Egyptian": "Egypt",
    "Greek": "Greece",
    "Turkish": "Turkey",
    "Polish": "Poland",
    "Swedish": "Sweden",
    "Norwegian": "Norway",
    "Danish": "Denmark",
    "Finnish": "Finland",
    "Dutch": "Netherlands",
    "Portuguese": "Portugal",
    "Irish": "Ireland",
    "Korean": "South Korea",
    "Argentine": "Argentina",
    "Israeli": "Israel",
    "Iranian": "Iran",
    "Vietnamese": "Vietnam",
    "Thai": "Thailand",
    "Swiss": "Switzerland",
    "Austrian": "Austria",
    "Belgian": "Belgium",
    "British": "United Kingdom",
    "American": "United States",
}
# A description asking for a country's code (not ISO 3166-2's, of a subdivision).
_COUNTRY_CODE = re.compile(r"ISO[ -]?3166(?!-2)|alpha-2|country code|two-letter country", re.I)
# A place parameter (its words), where it is the origin or the end of a trip, and the
# words that introduce a place in a task.
PLACES = frozenset(
    {"locat", "citi", "town", "place", "region", "countri", "state", "area", "address"}
    | {"destin", "origin", "venu", "counti", "loc", "restaur", "store", "shop"}
)
# A place known by a name of its own, which the gazetteer of cities and countries lacks:
# a venue, a restaurant, a store.
_VENUES = frozenset({"venu", "restaur", "store", "shop"})
_AT_A_VENUE = frozenset({"from", "at"})  # "order from McDonald's", not "Nobu in Malibu"
# Words that make a name a venue, not a town: "Hotel Paradise", "the Museum of Modern Art".
_VENUE_WORDS = frozenset(
    {"hotel", "inn", "resort", "museum", "restaurant", "cafe", "bar", "library", "gallery"}
    | {"stadium", "arena", "airport", "station", "mall", "theater", "theatre", "hospital"}
)
_ORIGINS = frozenset({"start", "origin", "from", "departur", "sourc"})
_ENDS = frozenset({"end", "destin", "to", "arriv", "target"})
_PLACE_WORDS = frozenset({"in", "at", "near", "from", "to", "around", "within"})
# A parameter for a street address (its name's or description's words), and the words of
# a larger place: a parameter named for one, or described as one and not as an address,
# takes no street address.
_ADDRESS_WORDS = frozenset(
    {"address", "loc", "location", "street", "destination", "origin", "pickup", "dropoff"}
)
_AREAS = frozenset({"city", "country", "state", "region", "town", "county", "province"})
_STREET_WORDS = frozenset({"address", "street"})


def takes_address(own: frozenset[str], words: frozenset[str], description: str) -> bool:
    """Whether a parameter (its name's words `own`, with its description's first words:
    `words`) asks for a street address."""
    described = set(split_words(description))
    area_only = bool(described & _AREAS) and not described & _STREET_WORDS
    return bool(words & _ADDRESS_WORDS) and not own & _AREAS and not area_only


def address(own: frozenset[str], facts: Facts) -> str:
    """The street address for a parameter named by `own`: for an origin the one "from"
    comes before, for a destination the one after "to", else the first."""
    wanted = _trip_end({stem(word) for word in own}, frozenset())
    found = next(
        (a for a in facts.addresses if (facts.before.get(a) or [""])[-1] in wanted),
        facts.addresses[0],
    )
    facts.addresses.remove(found)
    facts.given_places.append(found)
    return found


@functools.lru_cache(maxsize=4096)
def shows_place_with_region(description: str) -> bool:
    """Whether `description` shows a place written with its region: "e.g. Boston, MA",
    "Vancouver, BC", "Paris, France", "in the format 'City, State'"; not a list of
    places ("e.g., New York City, Los Angeles, Chicago", "e.g., London, New York": no
    London is in New York; "e.g., Bali, Costa Rica, Maldives")."""
    places = gazetteer()
    for match in _TWO_NAMES.finditer(description):
        first, second = match[1], match[2]
        if second in _PLACE_PARTS or _CODE.fullmatch(second):
            return True
        state = places.state_code(second)
        region = f"US-{state}" if state else places.country_code(second)
        if region is None:
            continue  # "New York City, Los Angeles": a list
        known = {places.cities.get(fold(first)), places.in_us.get(fold(first))} - {None}
        if region in known or (not known and not _LIST_GOES_ON.match(description, match.end())):
            return True  # "Paris, France"; "Smallville, Kansas", not "Japan, China, India"
    return False


def address_place(name: str, facts: Facts, description: str) -> str | None:
    """For place parameter `name`, which takes no street address, the place a street
    address in the task is in ("New York, NY" of "350 Fifth Avenue, New York, NY"; for an
    origin the address after "from", for a destination the one after "to"): as written
    where the description shows a "City, State" value, else its first part."""
    wanted = _trip_end(name_words(name), frozenset())
    placed = [a for a in facts.addresses if ", " in a]
    found = next((a for a in placed if (facts.before.get(a) or [""])[-1] in wanted), None)
    if found is None and not wanted and placed:
        found = placed[0]
    if found is None:
        return None
    facts.addresses.remove(found)
    place = found.split(", ", 1)[1]
    return place if shows_place_with_region(description) else place.split(", ", 1)[0]


def place_name(name: str, facts: Facts, description: str) -> str:
    """A name left for parameter `name`: for a venue (a restaurant, a store) the first
    the gazetteer does not know, one after "from" or "at" first ("from McDonald's on
    Uber Eats", "Walmart's prices in Denver", "Nobu in Malibu"); for another place
    ("city", "destination") the first written as one ("in Oslo", "to Rome" for a
    destination, "from Oslo" for an origin; not a venue where a city is written after
    it: "in Hotel Paradise, Las Vegas"; for a city, not a country or state where the
    task names a city: "Lyon in France"), else the first written with its region
    ("Marshall, MN") or that the gazetteer knows ("the UV index for Tokyo"); for
    anything else the first that is not written as a place; "Boston, MA" where the
    description shows such a value (`written_place`)."""
    words = name_words(name)
    where = [n for n in facts.names if introduced(n, facts)]
    if "citi" in words and (city := _city_over_its_region(where, facts)):
        found = city  # "for Lyon in France": Lyon, though "in" introduces France
    elif words & PLACES and words & PLACES <= _VENUES:  # "from McDonald's on Uber Eats"
        unknown = [n for n in facts.names if not gazetteer().knows(n)]
        at = [n for n in unknown if (facts.before.get(n) or [""])[-1] in _AT_A_VENUE]
        found = next(iter(at + unknown), "") or facts.names[0]
    elif words & PLACES:
        if not words & _VENUES:
            where = _not_venues(where, facts)
        wanted = _trip_end(words, _PLACE_WORDS)
        ended = next((n for n in where if (facts.before.get(n) or [""])[-1] in wanted), None)
        found = ended or next(iter(where), None) or _unintroduced_place(words, facts)
    else:
        found = next((n for n in facts.names if n not in where), facts.names[0])
    facts.names.remove(found)
    return written_place(found, facts, description, name)


def _not_venues(where: list[str], facts: Facts) -> list[str]:
    """The names written as places that are no venue; where each is one, the city written
    right after the first ("in Hotel Paradise, Las Vegas": Las Vegas; not a state's
    name, "Bar Harbor, Maine"), if any."""
    plain = [n for n in where if not _VENUE_WORDS & set(n.lower().split())]
    if plain or not where:
        return plain
    places = gazetteer()
    parts = facts.places.get(where[0], "").split(", ")
    city = parts[1] if len(parts) > 1 else ""
    if city in facts.names and fold(city) in places.cities and not places.is_region(city):
        return [city]
    return where


def _city_over_its_region(where: list[str], facts: Facts) -> str | None:
    """For a city parameter where every name the task introduces as a place is a country
    or a US state, the first other name the gazetteer knows as a city: "the weather for
    Lyon in France"."""
    places = gazetteer()
    if not where or not all(places.is_region(n) for n in where):
        return None
    return next(
        (n for n in facts.names if n not in where and places.region(n, abbreviated=True)), None
    )


_REGION_WORDS = frozenset(stem(w) for w in _AREAS - {"city", "town"})  # a region's stems


def _unintroduced_place(words: frozenset[str], facts: Facts) -> str:
    """For a place parameter named by `words`, where the task introduces no name as a
    place: the first name written with its region ("for Marshall, MN") or that the
    gazetteer knows ("the UV index for Tokyo")."""
    known = [n for n in facts.names if n in facts.places or gazetteer().knows(n)]
    if not words & _REGION_WORDS:  # a place, not the region written after one: "Miami,
        # USA" gives Miami (where "USA" of "New York, USA" comes before it)
        regions = {written.split(", ", 1)[1] for written in facts.places.values()}
        known = [n for n in known if n not in regions] or known
    return known[0] if known else facts.names[0]


def introduced(name: str, facts: Facts) -> bool:
    """A name written as a place: "in Oslo", "from Rome"."""
    return (facts.before.get(name) or [""])[-1] in _PLACE_WORDS


def written_place(value: str, facts: Facts, description: str, parameter: str) -> str:
    """`value` as parameter `parameter` takes it: for a country parameter, the country of
    a people's adjective ("German": Germany), and its code where the description asks
    for one (`_as_country_code`); for a place parameter
    whose description shows a "City, State" value, as the task writes it ("Boston, MA",
    "Portland, ME"), else with the city's state or country (the state's code where the
    description shows one; where it speaks of a state, a US city of the name first); a
    name the gazetteer does not know as a city (a country's, a state's) as it is."""
    if not name_words(parameter) & PLACES:
        return value
    facts.given_places.append(value)
    if _COUNTRY in name_words(parameter):
        value = _DEMONYMS.get(value, value)  # "German history": Germany
    if _as_country_code(value, description, parameter):
        return gazetteer().country_code(value) or value  # "in the UK" for alpha-2: GB
    if not shows_place_with_region(description):
        return value
    place = facts.places.get(value)
    if place:
        following = place.split(", ", 1)[1]
        if following in facts.names:
            facts.names.remove(following)
        return place
    if code := facts.coded.get(value):  # "Portland, ME": "ME" is a stop word, no name
        return f"{value}, {code}"
    abbreviated = bool(_ABBREVIATED.search(description))
    in_us = abbreviated or "state" in description.lower()
    region = gazetteer().region(value, abbreviated=abbreviated, in_us=in_us)
    return f"{value}, {region}" if region else value


def _as_country_code(value: str, description: str, parameter: str) -> bool:
    """Whether a country parameter ("country", not "city") whose description asks for a
    code (ISO 3166-1, alpha-2; not ISO 3166-2's subdivisions) is given a country that is
    no US state ("Georgia" is both: left as written)."""
    if "countri" not in name_words(parameter) or not _COUNTRY_CODE.search(description):
        return False
    places = gazetteer()
    return places.country_code(value) is not None and places.state_code(value) is None


def state(facts: Facts, description: str) -> str | None:
    """For a state parameter, the US state the task gives: one an address or a place in
    it names ("1 Main St, Boston, MA", given to another parameter or not), else that of
    a city it names as a place ("in Boston") or a place parameter took, where it names no
    state or country itself — the code written after the city ("Portland, ME") first,
    else the gazetteer's; as a code where the description shows one, else by name."""
    places = gazetteer()
    abbreviated = bool(_ABBREVIATED.search(description))
    for found in [*facts.addresses, *facts.given_places]:
        for part in found.split(", ")[1:]:
            if code := places.state_code(part.split(" ")[0]):
                return places.state_name(code, abbreviated=abbreviated)
    if any(places.is_region(name) for name in facts.names):
        return None
    for city in [*facts.given_places, *(n for n in facts.names if introduced(n, facts))]:
        code = facts.coded.get(city) or places.state_of(city)
        if code and code in places.states:
            return places.state_name(code, abbreviated=abbreviated)
    return None


def _trip_end(words: set[str] | frozenset[str], otherwise: frozenset[str]) -> frozenset[str]:
    """The word that introduces a place for a parameter named by `words`: "from" for an
    origin, "to" for an end of a trip, else `otherwise`."""
    if words & _ORIGINS:
        return frozenset({"from"})
    if words & _ENDS:
        return frozenset({"to"})
    return otherwise
