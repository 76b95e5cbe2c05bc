"""The five steps together: ranking, "no suitable tool", history, feedback, whitelist."""

from __future__ import annotations

import pytest

from toolrun.selection.cards import ToolCard
from toolrun.selection.pipeline import Record, Selector
from toolrun.tools import ToolRegistry


def tool(name: str, description: str, **properties: str) -> ToolCard:
    schema = {
        "type": "object",
        "properties": {p: {"type": t} for p, t in properties.items()},
        "required": list(properties),
    }
    return ToolCard.parse({"name": name, "description": description, "parameters": schema})


WEATHER = tool("weather_forecast", "Forecast the weather of a city for some days", city="string")
STOCKS = tool("stock_price", "Current price of a company's stock", company="string")
BMI = tool(
    "body_mass_index",
    "Calculate body mass index from weight and height",
    weight="number",
    height="number",
)


# Two tools that match the same tasks equally well.
TWINS = [
    tool("fetch_page", "Download a web page by URL", url="string"),
    tool("get_page", "Download a web page by URL", url="string"),
]


@pytest.fixture
def selector() -> Selector:
    return Selector([WEATHER, STOCKS, BMI])


def test_the_right_tool_is_chosen_with_its_arguments_and_a_trace(selector: Selector) -> None:
    selection = selector.select('What will the weather be in "Lisbon" tomorrow?')

    assert selection.chosen == "weather_forecast"
    assert selection.arguments == {"city": "Lisbon"}
    assert selection.candidates[0].name == "weather_forecast"
    assert set(selection.trace) == {
        "1_scenario",
        "2_intents",
        "2_intents_by",
        "3_matching",
        "3_matching_by",
        "4_evaluation",
        "5_arguments",
        "5_arguments_by",
    }
    assert (selection.trace["2_intents_by"], selection.trace["5_arguments_by"]) == (
        "rules",
        "rules",
    )
    assert selection.trace["5_arguments"] == {"city": "quoted in the task"}


def test_a_task_no_tool_fits_gets_no_suitable_tool(selector: Selector) -> None:
    selection = selector.select("Translate this poem into French")

    assert selection.chosen is None
    assert selection.reason.startswith("no suitable tool")
    assert selection.arguments is None


def test_a_related_but_wrong_tool_is_not_chosen() -> None:
    selection = Selector([BMI]).select("Calculate the area of a triangle with base 10 and height 5")

    assert selection.chosen is None


def test_history_moves_a_tool_that_fails_down() -> None:
    selector = Selector(TWINS)
    task = "Download the web page https://example.com"
    first = selector.select(task).chosen
    other = "get_page" if first == "fetch_page" else "fetch_page"

    moved = selector.select(task, history={first: Record(success_rate=0.2)})

    assert moved.chosen == other
    assert "history 20% success" in moved.candidates[1].why


def test_feedback_moves_a_tool_up() -> None:
    selector = Selector(TWINS)
    task = "Download the web page https://example.com"
    second = selector.select(task).candidates[1].name

    liked = selector.select(task, history={second: Record(success_rate=1.0, rating=5)})

    assert liked.chosen == second


def test_a_whitelisted_tool_that_matches_goes_first_and_one_that_does_not_stays(
    selector: Selector,
) -> None:
    task = "The weather forecast for the city of Oslo"
    assert selector.select(task).chosen == "weather_forecast"

    assert selector.select(task, whitelist={"stock_price"}).chosen == "weather_forecast"
    other = tool("city_forecast", "Weather forecast for a city", city="string")
    twins = Selector([WEATHER, other])
    second = twins.select(task).candidates[1].name
    preferred = twins.select(task, whitelist={second})
    assert preferred.chosen == second
    assert "whitelisted" in preferred.candidates[0].why


def test_excluded_tools_are_never_candidates(selector: Selector) -> None:
    selection = selector.select("Weather in Oslo", excluded={"weather_forecast"})

    assert "weather_forecast" not in [c.name for c in selection.candidates]


def test_over_the_registry_a_task_finds_its_builtin_tool() -> None:
    cards = [ToolCard.of(t.descriptor) for t in ToolRegistry.with_builtins().list()]
    selector = Selector(cards)

    assert selector.select("Show the first 20 lines of src/app.py").chosen == "read"
    assert selector.select("Search the code for the regex 'TODO'").chosen in ("grep", "search")
    assert selector.select("Commit the staged changes with a message").chosen == "git_commit"
    chosen = selector.select('Read the file "notes/todo.md"')
    assert (chosen.chosen, chosen.arguments) == ("read", {"file_path": "notes/todo.md"})
