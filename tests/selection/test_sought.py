"""What a task seeks (`sought`) and how much of it a tool lacks: the judge's
`sought_missing` signal, which makes it doubt a tool that shares a task's words but not
what it asks for."""

from __future__ import annotations

import pytest

from toolrun.selection.cards import ToolCard
from toolrun.selection.pipeline import Selector
from toolrun.selection.sought import lacked, sought
from toolrun.selection.text import terms


@pytest.mark.parametrize(
    ("task", "seeks"),
    [
        ("What is the freezing point of water at 10 kPa?", ("freezing", "point")),
        ("What's the lowest score in the game?", ("lowest", "score")),
        ("Calculate the area of a triangle with base 10", ("area",)),
        ("How many calories does an apple have?", ("calories",)),
        # A vague head: what follows "of" is what is sought.
        ("What are the names of proteins in the membrane?", ("proteins",)),
        ("Get me a list of vegetarian foods", ("vegetarian", "foods")),
        # Names, possessors and number words are values, not what is sought.
        ("What was Albert Einstein's contribution to science?", ("contribution",)),
        ("show me today's date", ("date",)),
        ("What's today's date?", ("date",)),  # apostrophes in words open no quote
        ("What is John's age and Mary's height?", ("age",)),
        ("What are the top five flower species?", ("flower", "species")),
        ("What are the 3 largest cities in Japan?", ("largest", "cities")),
        ("What's the weather today?", ("weather",)),
        # A question after a request is still one.
        ("Please tell me what is the diameter of the moon", ("diameter",)),
        # "which" asks only at a sentence's start: "…, which is a trademark" does not.
        ("Which is the tallest tower in Paris?", ("tallest", "tower")),
    ],
)
def test_a_question_or_command_says_what_it_seeks(task: str, seeks: tuple[str, ...]) -> None:
    assert sought(task) == seeks


@pytest.mark.parametrize(
    "task",
    [
        "Book a hotel room in Porto for 3 nights",  # no question or command of that form
        "Who won the cup in 2020?",
        "The logo, which is a registered trademark of the company",
        # Quoted: a value, not the task's question.
        "Translate 'What is the weather?' into French",
        "Translate \u2018What is the weather?\u2019 into French",
        'Translate "What is the weather?" into French',
        # An acronym is a name, left out, and what follows its "of" is not sought: the
        # BMI is asked for, not a person.
        "Calculate the BMI of a person who weighs 70 kg",
        "Determine whether the number 17 is prime",  # a clause, not a thing
        "What is the best one?",  # only vague words
        "is docker running? use docker ps to find out",
    ],
)
def test_a_task_that_does_not_say_what_it_seeks_seeks_nothing(task: str) -> None:
    assert sought(task) is None


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "task",
    [
        "find the " * 25_000,  # questions whose phrases run on with nothing sought
        "What is the name of the " * 10_000,  # "of" after "of", each vague
        "What is " + "a " * 100_000 + "tower",
        "\n" * 200_000,  # where "which" may start a sentence
        "\n " * 100_000,
        "\u201c" * 200_000,  # quotes opened and never closed
        "\u2018" * 200_000,
        "'" * 200_000,
    ],
)
def test_a_long_task_is_read_in_linear_time(task: str) -> None:
    assert sought(task) is None


def test_each_word_is_sought_once_by_its_stem() -> None:
    assert sought("What is the freezing freeze point of water?") == ("freezing", "point")


def test_at_most_four_words_are_sought() -> None:
    found = sought("What is the average annual rainfall total amount level in Peru?")

    assert found == ("average", "annual", "rainfall", "amount")


def test_a_tool_lacks_the_words_sought_that_its_words_miss() -> None:
    tool = set(terms("boiling point calculator: the boiling point of a liquid, pressure"))

    assert lacked(("boiling", "point"), tool) == []
    assert lacked(("freezing", "point"), tool) == ["freezing"]
    assert lacked(("diameter",), tool) == ["diameter"]
    assert lacked(None, tool) == []  # nothing sought: no evidence either way
    assert lacked((), tool) == []
    # A long stem matches one it begins, or that begins it (the stemmer parts
    # "multiplication" from "multiply"); a short one only itself ("integ", "integr").
    assert lacked(("multiplication",), set(terms("multiply two numbers"))) == []
    assert lacked(("multiply",), set(terms("the multiplication of numbers"))) == []
    assert lacked(("integer",), set(terms("a definite integral"))) == ["integer"]


BOILING = ToolCard.parse(
    {
        "name": "thermo.boiling_point",
        "description": "Calculate the boiling point of a liquid at a given pressure.",
        "parameters": {
            "type": "object",
            "properties": {
                "substance": {"type": "string", "description": "The liquid, e.g. water"},
                "pressure": {"type": "number", "description": "Pressure in kPa"},
            },
            "required": ["substance", "pressure"],
        },
    }
)


def test_the_judge_doubts_a_tool_that_lacks_what_the_task_seeks() -> None:
    selector = Selector([BOILING])

    fits = selector.select("What is the boiling point of water at 10 kPa?").candidates[0]
    near = selector.select("What is the freezing point of water at 10 kPa?").candidates[0]

    assert fits.signals["sought_missing"] == 0.0
    assert near.signals["sought_missing"] == 0.5
    assert "lacks freezing" in near.why  # shown with the candidate
    assert not any(why.startswith("lacks") for why in fits.why)
    assert near.confidence is not None
    assert fits.confidence is not None
    assert near.confidence < fits.confidence
    # Of the near miss's signals, the share lacking lowers its confidence.
    judge = selector.judges["words"]
    assert judge.logit(near.signals) < judge.logit(near.signals | {"sought_missing": 0.0})
