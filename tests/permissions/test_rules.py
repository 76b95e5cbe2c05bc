"""Standing rules match parsed commands and argument values, never raw strings."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolrun.database import open_database
from toolrun.permissions.rules import RuleBook, RuleError


@pytest.fixture
def book(tmp_path: Path) -> RuleBook:
    return RuleBook(open_database(f"sqlite:///{tmp_path / 'rules.db'}"))


@pytest.mark.parametrize(
    ("rule", "command", "covered"),
    [
        ("git status", "git status", True),
        ("git status", "git  status", True),
        ("git status", "'git' \"status\"", True),
        ("git status", "git status --short", False),
        ("git status *", "git status --short", True),
        ("git status *", "git status", True),
        ("git status *", "git status; rm -rf ~", False),
        ("git status *", "git status && git push --force", False),
        ("git status *", "git status | sh", False),
        ("git status *", "git status $(rm -rf ~)", False),
        ("git status *", "git statusx", False),
        ("git status *", "git stat", False),
        ("git status *", "echo git status", False),
        ("git status *", "sh -c 'git status; rm -rf ~'", False),
        ("rm -rf build", "rm -rf build", True),
        ("rm -rf build", "rm -rf build /", False),
        ("rm -rf build", "rm -rf build; rm -rf build", True),  # each command is covered
        ("rm -rf build", "rm -rf 'build'", True),
        ("rm -rf build", "rm -rf build\nrm -rf /", False),
        ("rm -rf build", "rm -rf (", False),  # does not parse: never covered
    ],
)
def test_a_command_rule_covers_exactly_its_parsed_words(
    book: RuleBook, rule: str, command: str, covered: bool
) -> None:
    book.add("bash", created_by="ops", command=rule)

    assert (book.first_match("bash", "anyone", {"command": command}) is not None) is covered


def test_a_rule_for_one_agent_covers_no_other(book: RuleBook) -> None:
    book.add("bash", created_by="ops", agent_id="id-1", agent_name="builder", command="make test")

    assert book.first_match("bash", "id-1", {"command": "make test"}) is not None
    assert book.first_match("bash", "id-2", {"command": "make test"}) is None  # same name, later
    assert book.first_match("bash", None, {"command": "make test"}) is None


def test_argument_rules_compare_values(book: RuleBook) -> None:
    book.add("write", created_by="ops", arguments={"file_path": "notes.md"})

    assert book.first_match("write", "a", {"file_path": "notes.md", "content": "x"})
    assert book.first_match("write", "a", {"file_path": "other.md", "content": "x"}) is None
    assert book.first_match("edit", "a", {"file_path": "notes.md"}) is None


@pytest.mark.parametrize("command", ["git status; ls", "rm -rf (", "a && b"])
def test_a_rule_command_must_be_one_simple_command(book: RuleBook, command: str) -> None:
    with pytest.raises(RuleError):
        book.add("bash", created_by="ops", command=command)


def test_rules_are_listed_and_removed(book: RuleBook) -> None:
    rule = book.add("bash", created_by="ops", command="ls")

    assert [r.id for r in book.list()] == [rule.id]
    assert book.remove(rule.id)
    assert not book.remove(rule.id)
    assert book.first_match("bash", "a", {"command": "ls"}) is None
