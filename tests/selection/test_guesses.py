"""Step 5's last resort with the embedding model: a required text parameter the rules
left open takes the task's phrase most like it in meaning (`guesses`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from toolrun.cli import app
from toolrun.selection.arguments import fill
from toolrun.selection.cards import ToolCard
from toolrun.selection.guesses import LEAST_LIKE, SOURCE, _most_like, _phrases, guessed
from toolrun.selection.pipeline import Selector

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

PRICER_SCHEMA: dict[str, Any] = {
    "name": "sculpture_price.calculate",
    "description": "Calculate the estimated price to commission a sculpture.",
    "parameters": {
        "type": "object",
        "properties": {
            "material": {"type": "string", "description": "The material used for the sculpture."},
            "size": {"type": "integer", "description": "The size of the sculpture in feet."},
        },
        "required": ["material", "size"],
    },
}
PRICER = ToolCard.parse(PRICER_SCHEMA)


def tool(properties: dict[str, Any], required: list[str]) -> ToolCard:
    schema = {"type": "object", "properties": properties, "required": required}
    return ToolCard.parse({"name": "lookup", "description": "Look it up.", "parameters": schema})


def test_an_open_text_parameter_takes_the_phrase_most_like_it(encoder: Encoder) -> None:
    task = "What is the price to commission a sculpture made of marble with a size of 3 feet?"
    assert fill(PRICER, task).missing == ["material"]  # the rules find no material

    selection = Selector([PRICER], encoder).select(task)

    assert selection.chosen == "sculpture_price.calculate"
    assert selection.arguments == {"material": "marble", "size": 3}
    assert (selection.missing, selection.guessed) == ([], ["material"])
    assert not selection.valid  # a guess is to check before the call
    assert selection.as_dict()["valid"] is False
    assert selection.trace["5_arguments"]["material"] == SOURCE


def test_the_judge_weighs_what_the_rules_found_not_the_guess(encoder: Encoder) -> None:
    task = "What is the price to commission a sculpture made of marble with a size of 3 feet?"

    [candidate] = Selector([PRICER], encoder).select(task).candidates

    assert candidate.signals["missing"] == 0.5  # one of the two required is open to the rules


def test_without_the_model_nothing_is_guessed() -> None:
    task = "What is the price to commission a sculpture made of marble with a size of 3 feet?"

    selection = Selector([PRICER]).select(task, min_confidence=0.01)

    assert selection.chosen == "sculpture_price.calculate"
    assert selection.missing == ["material"]
    assert "material" not in (selection.arguments or {})


def test_the_tools_own_words_and_given_values_are_no_guess(encoder: Encoder) -> None:
    task = "Price a sculpture for the museum"  # only the tool's words and a place like it
    filled = fill(PRICER, task)

    assert guessed(encoder, PRICER, task, filled).arguments.get("material") != "sculpture"

    sport = tool(
        {
            "player": {"type": "string", "description": "The player."},
            "sport": {"type": "string", "description": "The type of sport."},
        },
        ["player", "sport"],
    )
    rules = fill(sport, "Who is the top tennis player?")
    rules.arguments["player"] = "tennis"  # as if given already: it is not given twice
    rules.missing = ["sport"]

    assert guessed(encoder, sport, "Who is the top tennis player?", rules).missing == ["sport"]


def test_a_phrase_too_unlike_the_parameter_is_no_guess(encoder: Encoder) -> None:
    sport = tool({"sport": {"type": "string", "description": "The type of sport."}}, ["sport"])
    task = "Please hurry, quickly"
    filled = fill(sport, task)

    assert guessed(encoder, sport, task, filled).missing == ["sport"]


def test_values_of_a_form_and_listed_or_defaulted_ones_are_never_guessed(
    encoder: Encoder,
) -> None:
    formed = tool(
        {
            "location": {"type": "string", "description": "Where the concert is."},
            "date": {"type": "string", "description": "The day of the concert."},
            "genre": {"type": "string", "description": "Genre. Default is 'any'."},
            "venue_kind": {"type": "string", "enum": ["hall", "park"]},
        },
        ["location", "date", "genre", "venue_kind"],
    )
    task = "Find rock concerts near the river this weekend"
    filled = fill(formed, task)

    assert set(guessed(encoder, formed, task, filled).missing) == set(filled.missing)


def test_each_phrase_goes_to_one_parameter_and_errors_are_rechecked(encoder: Encoder) -> None:
    animals = tool(
        {
            "species1": {"type": "string", "description": "The first species."},
            "species2": {"type": "string", "description": "The second species.", "maxLength": 3},
        },
        ["species1", "species2"],
    )
    task = "How similar are a chimpanzee and a gorilla genetically?"
    filled = fill(animals, task)

    guessed_ = guessed(encoder, animals, task, filled)

    assert guessed_.arguments["species1"] != guessed_.arguments.get("species2")
    assert guessed_.errors  # species2's guess breaks its schema, and that is said
    assert guessed_.guessed == ["species1", "species2"]
    assert not guessed_.valid


def test_phrases_are_runs_of_words_that_could_be_a_value() -> None:
    task = "Recipes based on the 19th century cookbook from Foodnetwork.com about green tea"

    found = _phrases(task, excluded=set())

    assert {"green tea", "century cookbook", "Recipes"} <= set(found)
    assert not {"based", "th", "Foodnetwork", "com", "about green"} & set(found)
    assert _phrases("the docket AL2562 of case b12", set()) == ["docket", "case"]  # no digits
    assert "king bed" in _phrases("a suite with a king bed", set())  # "bed" is no participle
    assert "tea" not in _phrases(task, excluded={"tea"})


def test_a_longer_phrase_holding_the_best_is_taken_if_about_as_like() -> None:
    phrases = ["membrane", "plasma membrane", "proteins"]

    assert _most_like(phrases, [0.45, 0.44, 0.3], set()) == "plasma membrane"
    assert _most_like(phrases, [0.45, 0.38, 0.3], set()) == "membrane"
    assert _most_like(phrases, [0.45, 0.44, 0.3], {"membrane", "plasma membrane"}) == "proteins"
    assert _most_like(phrases, [LEAST_LIKE - 0.01] * 3, set()) is None


def test_a_long_task_has_its_first_phrases_weighed_only(
    encoder: Encoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each phrase is embedded: a long task costs no more than a short one's few dozen."""
    weighed: list[str] = []
    original = encoder.encode

    def counting(texts: list[str]) -> Any:
        weighed.extend(texts)
        return original(texts)

    monkeypatch.setattr(encoder, "encode", counting)
    syllables = ("ka", "lo", "mi", "nu", "pe", "ri", "so", "tu")
    words = [a + b for a in syllables for b in ("ran", "sel", "tov", "wex", "zum")]
    task = ", ".join(" ".join(words[i : i + 2]) for i in range(0, 40, 2)) + ", made of marble"
    assert len(_phrases(task, set())) == 32  # the first 32 of 62
    filled = fill(PRICER, task)

    guessed(encoder, PRICER, task, filled)

    assert 0 < len(weighed) <= 33  # the first 32 phrases and the one parameter


def test_the_cli_shows_a_guess_as_one_to_check(encoder: Encoder, tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([PRICER_SCHEMA]), encoding="utf-8")
    task = "What is the price to commission a sculpture made of marble with a size of 3 feet?"

    shown = CliRunner().invoke(app, ["select", task, "--local", "--tools", str(tools)])
    as_json = CliRunner().invoke(app, ["select", task, "--local", "--tools", str(tools), "--json"])

    assert shown.exit_code == 0, shown.output
    assert "guessed (check before calling): material" in shown.stdout
    found = json.loads(as_json.stdout)
    assert (found["guessed"], found["valid"]) == (["material"], False)
