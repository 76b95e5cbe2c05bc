"""Step 5's unit parameters (`selection.units`): the unit a task asks for, the unit a
named parameter's number is written in, both sides of a conversion."""

from __future__ import annotations

from tests.selection.test_arguments import card, typed

from toolrun.selection.arguments import fill


def test_a_unit_asked_for_goes_to_the_unit_the_answer_is_in() -> None:
    speed = card(
        {
            "distance": typed("integer", "The distance travelled in meters."),
            "time": typed("integer", "The time it took in seconds."),
            "to_unit": typed("string", "The unit of the speed, default is m/s."),
        },
        ["distance", "time"],
    )

    filled = fill(speed, "the speed of an object in km/h if it went 450 meters in 20 seconds")

    assert filled.arguments == {"distance": 450, "time": 20, "to_unit": "km/h"}
    # the units the numbers are written in are not the one asked for
    assert "to_unit" not in fill(speed, "it went 450 meters in 20 seconds").arguments
    weight = card({"compound": typed("string"), "to_unit": typed("string", "The unit.")})
    asked = fill(weight, "the molecular weight of C6H12O6 in grams/mole").arguments
    assert asked["to_unit"] == "grams/mole"


def test_a_unit_of_a_named_parameter_is_the_unit_its_number_is_written_in() -> None:
    circle = card(
        {
            "radius": typed("integer", "The radius of the circle."),
            "unit": typed("string", "The unit of measurement for the radius. Default is 'cm'."),
        },
        ["radius"],
    )

    assert fill(circle, "a circle with a radius of 4 inches").arguments == {
        "radius": 4,
        "unit": "inches",
    }
    # a unit that names no parameter says nothing of whose unit it is
    vague = card({"radius": typed("integer"), "unit": typed("string", "The unit of area.")})
    assert "unit" not in fill(vague, "a radius of 4 inches").arguments
    # nor is a word that is no unit a unit ("in my recipe")
    assert "unit" not in fill(circle, "a radius of 4 in my recipe").arguments


def test_a_conversion_goes_from_the_unit_of_its_number_to_the_other() -> None:
    convert = card(
        {
            "value": typed("integer", "The amount."),
            "from_unit": typed("string", "From. Supports 'teaspoon', 'tablespoon', 'cup'."),
            "to_unit": typed("string", "To. Supports 'teaspoon', 'tablespoon', 'cup'."),
        },
        ["value", "from_unit", "to_unit"],
    )

    filled = fill(convert, "How many teaspoons are in 2 tablespoons for my recipe?")

    # written as the description lists them
    assert filled.arguments == {"value": 2, "from_unit": "tablespoon", "to_unit": "teaspoon"}
    pounds = card({"from_unit": typed("string"), "to_unit": typed("string")})
    assert fill(pounds, "How many ounces in 2 pounds of butter?").arguments == {
        "from_unit": "pounds",
        "to_unit": "ounces",
    }


def test_a_unit_the_description_cannot_take_is_not_given() -> None:
    bmi = card(
        {
            "weight": typed("integer", "Weight in kilograms."),
            "unit": typed("string", "The system for the weight: 'imperial' or 'metric'."),
        }
    )

    assert fill(bmi, "my weight is 85 kilograms").arguments == {"weight": 85}
    listed = card({"unit": {"type": "string", "enum": ["cm", "m"]}, "radius": typed("integer")})
    assert fill(listed, "a radius of 4 cm").arguments == {"unit": "cm", "radius": 4}


def test_what_a_measure_is_of_goes_to_a_parameter_for_the_item() -> None:
    convert = card(
        {
            "quantity": typed("integer", "The quantity."),
            "from_unit": typed("string", "The unit to convert from."),
            "to_unit": typed("string", "The unit to convert to."),
            "item": typed("string", "The item to convert."),
        },
        ["quantity", "from_unit", "to_unit", "item"],
    )

    assert fill(convert, "How many ounces in 2 pounds of butter?").arguments == {
        "quantity": 2,
        "from_unit": "pounds",
        "to_unit": "ounces",
        "item": "butter",
    }
    # "of" after a word that is no unit measures nothing
    assert "item" not in fill(convert, "2 pieces of advice to convert").arguments


def test_a_unit_or_a_measure_is_read_only_where_the_task_says_one() -> None:
    circle = card(
        {
            "radius": typed("integer", "The radius."),
            "unit": typed("string", "The unit of measurement for the radius."),
        }
    )
    # the radius's own unit over the one the answer is asked in
    asked = fill(circle, "the area in cm of a circle with a radius of 4 inches").arguments
    assert asked == {"radius": 4, "unit": "inches"}
    two = card({"from_unit": typed("string"), "to_unit": typed("string")})
    assert fill(two, "Convert 5 miles to km").arguments == {"from_unit": "miles", "to_unit": "km"}
    food = card({"item": typed("string"), "product_id": typed("string")})
    assert fill(food, "2 liters of water is how many cups").arguments["item"] == "water"
    assert "item" not in fill(food, "after 3 hours of running").arguments  # no measure
    assert fill(food, "Order 5 kg of cement").arguments == {"item": "cement"}  # no product_id


def test_a_long_run_of_digits_is_read_in_linear_time() -> None:
    food = card({"item": typed("string")}, ["item"])

    for task in ("1" * 200_000, "1," * 100_000):
        assert fill(food, task).arguments == {}
