"""Sub-agent definitions: Markdown with YAML front matter, read strictly."""

from __future__ import annotations

import pytest

from toolrun.permissions.levels import PermissionLevel
from toolrun.subagents.definition import SubAgentError, parse_markdown, to_markdown

SEARCHER = """---
name: searcher
description: Finds things in the code; never changes anything.
tools: [grep, read, "tag:search"]
ceiling: read_only
model: small-coder
max_turns: 4
---
You search the code base.

Answer with file:line places.
"""


def test_front_matter_and_body_make_the_definition() -> None:
    agent = parse_markdown(SEARCHER, "searcher.md")

    assert agent.name == "searcher"
    assert agent.tools == ["grep", "read", "tag:search"]
    assert agent.ceiling is PermissionLevel.READ_ONLY
    assert (agent.model, agent.max_turns) == ("small-coder", 4)
    assert agent.prompt == "You search the code base.\n\nAnswer with file:line places."


def test_defaults_are_every_tool_read_only_and_ten_turns() -> None:
    agent = parse_markdown("---\nname: a\ndescription: d\n---\nprompt\n", "a.md")

    assert agent.tools is None
    assert agent.ceiling is PermissionLevel.READ_ONLY
    assert agent.max_turns == 10
    assert agent.model is None


@pytest.mark.parametrize(
    ("tools", "expected"),
    [("all", None), ("grep, read ,glob", ["grep", "read", "glob"]), ("[grep]", ["grep"])],
)
def test_tools_may_be_all_a_comma_list_or_a_yaml_list(
    tools: str, expected: list[str] | None
) -> None:
    text = f"---\nname: a\ndescription: d\ntools: {tools}\n---\nprompt\n"

    assert parse_markdown(text, "a.md").tools == expected


def test_markdown_round_trips() -> None:
    agent = parse_markdown(SEARCHER, "searcher.md")
    every_tool = agent.model_copy(update={"tools": None})

    assert parse_markdown(to_markdown(agent), "again.md") == agent
    assert parse_markdown(to_markdown(every_tool), "again.md") == every_tool


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: a\nno front matter", "starts with YAML front matter"),
        ("---\nname: [a\n---\nbody", "not valid YAML"),
        ("---\n- a\n- b\n---\nbody", "must be a YAML mapping"),
        ("---\nname: a\ndescription: d\nprompt: p\n---\nbody", "the body, not a 'prompt'"),
        ("---\nname: a\ndescription: d\ncolour: red\n---\nbody", "colour: Extra inputs"),
        ("---\nname: A b\ndescription: d\n---\nbody", "name: String should match"),
        ("---\nname: a\ndescription: d\nceiling: root\n---\nbody", "ceiling: Input should be"),
        ("---\nname: a\ndescription: d\nmax_turns: 0\n---\nbody", "max_turns: Input should"),
        ("---\nname: a\ndescription: d\n---\n   \n", "prompt: String should have at least"),
        ("---\nname: a\n---\nbody", "description: Field required"),
        ("---\nname: a\ndescription: d\ntools: [grep, '']\n---\nb", "must not be empty"),
    ],
)
def test_bad_definitions_name_the_file_and_the_problem(text: str, message: str) -> None:
    with pytest.raises(SubAgentError) as raised:
        parse_markdown(text, ".toolrun/agents/a.md")

    assert str(raised.value).startswith(".toolrun/agents/a.md: ")
    assert message in str(raised.value)


def test_huge_definitions_are_refused() -> None:
    text = "---\nname: a\ndescription: d\n---\n" + "x" * (300 * 1024)

    with pytest.raises(SubAgentError, match="larger than 256 KiB"):
        parse_markdown(text, "a.md")
