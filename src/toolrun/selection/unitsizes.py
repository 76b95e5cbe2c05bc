"""Units a number is written in (`numbering`, `units`): what each measures and its size
in the base unit of that ("5 km" is 5000 m; "220µF" 0.00022 F), and a number converted
to the one unit of its kind a parameter's description names."""

from __future__ import annotations

import re
from functools import lru_cache

# A compound unit a description names ("m/s", "per", "m^2"): no one unit to convert to.
_COMPOUND = re.compile(r"[A-Za-z]\s*/\s*[A-Za-z]|\bper\b|\^", re.I)
# Units by what they measure and their size in the base unit of that.
UNITS = {
    name: (measure, size)
    for measure, size, names in (
        ("length", 1.0, "m meter meters metre metres"),
        ("length", 1000.0, "km kilometer kilometers kilometre kilometres"),
        ("length", 0.01, "cm centimeter centimeters centimetre centimetres"),
        ("length", 0.001, "mm millimeter millimeters millimetre millimetres"),
        ("length", 1609.344, "mi mile miles"),
        ("length", 0.3048, "ft foot feet"),
        ("length", 0.0254, "in inch inches"),
        ("time", 1.0, "s sec secs second seconds"),
        ("time", 0.001, "ms millisecond milliseconds"),
        ("time", 60.0, "min mins minute minutes"),
        ("time", 3600.0, "h hr hrs hour hours"),
        ("time", 86400.0, "day days"),
        ("time", 604800.0, "week weeks"),
        ("mass", 1.0, "kg kilogram kilograms"),
        ("mass", 0.001, "g gram grams"),
        ("mass", 1e-6, "mg milligram milligrams"),
        ("mass", 0.45359237, "lb lbs pound pounds"),
        ("mass", 0.028349523125, "oz ounce ounces"),
        ("volume", 1.0, "l liter liters litre litres"),
        ("volume", 0.001, "ml milliliter milliliters millilitre millilitres"),
        ("volume", 0.2365882365, "cup cups"),
        ("volume", 0.01478676478125, "tbsp tablespoon tablespoons"),
        ("volume", 0.00492892159375, "tsp teaspoon teaspoons"),
        ("volume", 3.785411784, "gal gallon gallons"),
        ("capacitance", 1.0, "farad farads"),
        ("inductance", 1.0, "henry henries henrys"),
        ("frequency", 1.0, "hertz"),
        ("voltage", 1.0, "volt volts"),
        ("current", 1.0, "ampere amperes amp amps"),
        ("power", 1.0, "watt watts"),
        ("energy", 1.0, "joule joules"),
        ("resistance", 1.0, "ohm ohms"),
        ("pressure", 1.0, "pascal pascals"),
        ("force", 1.0, "newton newtons"),
        ("data", 1.0, "byte bytes"),
    )
    for name in names.split()
}
_SYMBOLS = {
    "F": "capacitance",
    "H": "inductance",
    "Hz": "frequency",
    "V": "voltage",
    "A": "current",
    "W": "power",
    "J": "energy",
    "Ω": "resistance",
    "Pa": "pressure",
    "N": "force",
    "B": "data",
}
_PREFIXES = {
    "p": 1e-12,
    "n": 1e-9,
    "µ": 1e-6,
    "μ": 1e-6,
    "u": 1e-6,
    "m": 1e-3,
    "k": 1e3,
    "M": 1e6,
    "G": 1e9,
}


def converted(value: float | int, written: str, description: str) -> float | int:
    """`value` written in unit `written`, in the one unit of that kind (length, time,
    mass, or a prefixed farad, henry, hertz, volt, ampere, watt, joule or ohm) that
    `description` names; as it is where it names none, several or a compound ("m/s")."""
    found = unit_of(written)
    wanted = [u for u in _named_units(description) if found and u[0] == found[0]]
    if not found or len(wanted) != 1 or wanted[0] == found:
        return value
    result = round(value * found[1] / wanted[0][1], 10)
    return int(result) if float(result).is_integer() else result


def unit_of(written: str) -> tuple[str, float] | None:
    """The kind and size of a unit written after a number ("km", "miles", "µF")."""
    if written.lower() in UNITS and written.lower() != "in":  # "5 in the box"
        return UNITS[written.lower()]
    if len(written) > 1 and written[0] in _PREFIXES and written[1:] in _SYMBOLS:
        kind_of = _SYMBOLS[written[1:]]
        return kind_of, _PREFIXES[written[0]]
    return (_SYMBOLS[written], 1.0) if written in _SYMBOLS else None


@lru_cache(maxsize=4096)
def _named_units(description: str) -> frozenset[tuple[str, float]]:
    """The units a description names in words ("in seconds") or as a symbol in
    parentheses ("(kg)", "(F)"); none where it names a compound one ("m/s", "per")."""
    if _COMPOUND.search(description):
        return frozenset()
    words = [w for w in re.findall(r"[A-Za-z]+", description) if len(w) > 2]
    symbols = re.findall(r"\(([^\W\d]+)\)", description)
    return frozenset(found for w in [*words, *symbols] if (found := unit_of(w)) is not None)
