"""Steps 1 and 2 (scenario, intents) and the split of a task into its parts."""

from __future__ import annotations

import pytest

from toolrun.selection.steps import clauses, intents, scenarios


@pytest.mark.parametrize(
    ("task", "scenario"),
    [
        ("Read the first lines of README.md", "file operations"),
        ("Commit the staged changes to the feature branch", "version control"),
        ("Run the test suite with pytest", "system operations"),
        ("Download the page at https://example.com", "network requests"),
        ("Calculate the average of these numbers", "data analysis"),
        ("Where is the class Settings defined?", "code intelligence"),
        ("Resize the image to 200 pixels", "media processing"),
    ],
)
def test_the_scenario_of_a_task(task: str, scenario: str) -> None:
    assert scenarios(task)[0] == scenario


def test_a_task_without_telling_words_has_no_scenario() -> None:
    assert scenarios("hello there") == []


@pytest.mark.parametrize(
    ("task", "expected"),
    [
        ("Delete the old log files", ["delete"]),
        ("Find where the token is checked, then update it", ["search", "write"]),
        ("Convert the CSV to JSON", ["transform"]),
        ("Compute the mean and send it by email", ["calculate", "send"]),
    ],
)
def test_intents_in_the_order_the_task_asks(task: str, expected: list[str]) -> None:
    assert intents(task)[: len(expected)] == expected


def test_a_task_asking_several_things_is_split_into_its_parts() -> None:
    task = "Get the weather in Paris. After that, book a table for two; then email Ann."

    assert clauses(task) == ["Get the weather in Paris", "book a table for two", "email Ann"]
    assert clauses("Read it") == ["Read it"]
