"""References from one node's output into another's arguments."""

from __future__ import annotations

import pytest

from toolrun.dag.refs import BadReference, Reference, references, resolve

OUTPUTS = {"find": {"files": ["a.py", "b.py"], "odd key": {"x": 1}, "count": 2}}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("find.output", OUTPUTS["find"]),
        ("find.output.files", ["a.py", "b.py"]),
        ("find.output.files[0]", "a.py"),
        ("find.output.files[-1]", "b.py"),
        ('find.output["odd key"].x', 1),
        ("find.output.count", 2),
    ],
)
def test_a_reference_takes_its_value_with_its_json_type(text: str, value: object) -> None:
    assert resolve({"v": {"$ref": text}}, OUTPUTS) == {"v": value}


def test_references_are_replaced_inside_lists_and_objects() -> None:
    arguments = {
        "paths": [{"$ref": "find.output.files[1]"}, "c.py"],
        "n": {"k": {"$ref": "find.output.count"}},
    }

    assert resolve(arguments, OUTPUTS) == {"paths": ["b.py", "c.py"], "n": {"k": 2}}


def test_an_object_with_more_keys_than_ref_is_plain_data() -> None:
    arguments = {"v": {"$ref": "find.output", "other": 1}}

    assert resolve(arguments, OUTPUTS) == arguments
    assert list(references(arguments)) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("find.output.files[2]", "index 2 is out of range (find.output.files has 2 items)"),
        ("find.output.missing", "find.output has no key 'missing'"),
        ("find.output.count[0]", "find.output.count is not a list"),
        ("find.output.files.name", "find.output.files is not an object"),
        ("ghost.output", "node 'ghost' has no output"),
    ],
)
def test_a_missing_value_names_how_far_the_path_got(text: str, message: str) -> None:
    with pytest.raises(
        BadReference, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")
    ):
        resolve({"v": {"$ref": text}}, OUTPUTS)


@pytest.mark.parametrize(
    "text",
    [
        "find",
        "find.outputs",
        "find.output.",
        "find.output[x]",
        "find.output..a",
        3,
        "1a.output",
        'find.output["\\q"]',  # a quoted key that is not valid JSON
    ],
)
def test_malformed_references_are_refused(text: object) -> None:
    with pytest.raises(BadReference):
        Reference.parse(text)


def test_references_report_where_they_are() -> None:
    arguments = {"a": [{"$ref": "x.output"}], "b": {"c": {"$ref": "y.output.z"}}}

    assert list(references(arguments)) == [(("a", 0), "x.output"), (("b", "c"), "y.output.z")]
