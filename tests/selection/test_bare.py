"""Step 5: a required parameter no other rule fills takes the word a task names by the
parameter's noun (`bare`): "the branch feature-x", "the staging branch", "a branch
called experiment"."""

from __future__ import annotations

import pytest

from toolrun.selection.arguments import fill
from toolrun.selection.cards import ToolCard

SWITCH = ToolCard.parse(
    {
        "name": "switch_branch",
        "description": "Switch the working tree to a branch.",
        "parameters": {
            "type": "object",
            "properties": {
                "branch": {"type": "string"},
                "repo": {"type": "string", "description": "A directory inside the repository"},
            },
            "required": ["branch", "repo"],
        },
    }
)
CREATE = ToolCard.parse(
    {
        "name": "git_branch_create",
        "description": "Create a branch.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "start": {"type": "string"}},
            "required": ["name"],
        },
    }
)


@pytest.mark.parametrize(
    ("task", "branch"),
    [
        ("check out the branch feature-x", "feature-x"),  # after the noun, written as a name
        ("check out the branch feature-x.", "feature-x"),  # the sentence's stop is not its
        ("move over to the staging branch", "staging"),  # between a determiner and it
        ("switch to the develop branch, please", "develop"),
    ],
)
def test_a_word_the_task_names_by_the_parameters_noun_is_its_value(task: str, branch: str) -> None:
    filled = fill(SWITCH, task)

    assert filled.arguments == {"branch": branch}
    assert filled.sources["branch"] == "named by its noun in the task"
    assert filled.missing == ["repo"]  # a directory's parameter takes no bare word


@pytest.mark.parametrize(
    "task",
    [
        "switch to the current branch",  # says which, names none
        "check out a new branch",
        "switch the branch now",  # a plain word after the noun is prose, not a name
        "switch branch to it",
        "switch branches",
        "merge the staging branches",  # a plural names no one value
        "switch to the branch called seven",  # nor a number word
        "switch to a different branch",
        "switch to the git branch",
        "switch to the branch named after the ticket",
    ],
)
def test_a_word_that_names_no_value_is_not_taken(task: str) -> None:
    assert fill(SWITCH, task).missing == ["branch", "repo"]


def test_a_generic_name_is_named_by_the_tools_subject_after_called() -> None:
    filled = fill(CREATE, "create a branch called experiment")

    assert filled.arguments == {"name": "experiment"}
    assert filled.sources["name"] == "named by its noun in the task"
    # … not by the word before it ("the login branch" names the branch, not its name)
    assert fill(CREATE, "create the login branch").missing == ["name"]


def test_an_optional_parameter_takes_no_bare_word() -> None:
    optional = ToolCard.parse(
        {
            "name": "push",
            "description": "Push a branch.",
            "parameters": {"type": "object", "properties": {"branch": {"type": "string"}}},
        }
    )
    assert fill(optional, "push the develop branch").arguments == {}
    assert fill(SWITCH, "switch to the develop branch").arguments == {"branch": "develop"}


def test_a_long_task_is_read_in_linear_time() -> None:
    assert fill(SWITCH, "the " * 50_000 + "branch").missing == ["branch", "repo"]
    assert fill(SWITCH, "branch " + "a" * 100_000).missing == ["branch", "repo"]
