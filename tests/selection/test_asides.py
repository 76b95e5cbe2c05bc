"""What a task says of when or why (`toolrun.selection.asides`) is no part of what it asks
for: matching and the steps read the task without it; arguments still see it whole."""

from __future__ import annotations

import pytest
from tests.selection.support import builtin_cards

from toolrun.selection import pipeline
from toolrun.selection.asides import without_asides
from toolrun.selection.pipeline import Selector


@pytest.mark.parametrize(
    ("task", "left"),
    [
        ("show me exactly what's staged before I commit", "show me exactly what's staged"),
        ("stage everything before committing", "stage everything"),
        ("review the *.tf changes before they get staged.", "review the *.tf changes ."),
        (
            "list every line that imports acme.utils so I can fix them",
            "list every line that imports acme.utils",
        ),
        ("list the untracked files so that we don't forget any", "list the untracked files"),
        ("stage `a.py` before I commit", "stage `a.py`"),  # after a quote
        # an aside ends where the task's next part starts
        ("run the tests before committing and then push", "run the tests and then push"),
        ("lint src before I commit - also show me the diff", "lint src - also show me the diff"),
        ("stage the files before I commit\nthen push", "stage the files then push"),
        (
            "find the TODOs so I can fix them and show me git status",
            "find the TODOs and show me git status",
        ),
        ("show the staged diff before I proceed", "show the staged diff"),  # "proceed" is no past
        ("Before committing, check which files are modified", ", check which files are modified"),
        ("Before I commit: is anything staged?", ": is anything staged?"),
        ("After the rebase, force-push my branch", ", force-push my branch"),
        # an aside runs to its clause's end, not to a dot inside a name
        (
            "Get https://docs.python.org/3/library/pathlib.html so I can check Path.walk",
            "Get https://docs.python.org/3/library/pathlib.html",
        ),
    ],
)
def test_an_aside_is_set_aside(task: str, left: str) -> None:
    assert " ".join(without_asides(task).split()) == left
    assert len(without_asides(task)) == len(task)  # places kept


@pytest.mark.parametrize(
    "task",
    [
        "commit with the message 'so we can ship on Friday'",  # quoted
        "before committing",  # too little left
        "show the file as it was before the refactor",  # "before" + a noun: a time
        "so what changed in api.py?",  # no subject and verb after "so"
        # a long first clause is the ask, not its context
        "Before I touch anything I want to see the whole of config/settings.py, with numbers",
        "Because CI is red. Run the tests, then show failures",  # context is one sentence
        "what did README.md say before we rewrote it?",  # a time past: a revision
        # what the change should make a thing do is the change
        "change the config so the server will listen on 8080",
        "edit main.py so it doesn't print debug output anymore",
        "mark it resolved so the merge can continue",
        "Since which commit has test_api failed, and who changed it?",  # a question
        "Before we rewrote it, what did README.md say?",  # a time past, first
        "Once the build passes, deploy",  # too little left
    ],
)
def test_what_is_no_aside_is_kept(task: str) -> None:
    assert without_asides(task) == task


@pytest.mark.parametrize(
    ("task", "allowed", "without_asides_tool"),
    [
        (
            "Before committing, check which files are modified, staged or untracked.",
            {"git_status"},
            "git_add",
        ),
        (
            "Before I commit: is anything staged at the moment, and are there untracked files?",
            {"git_status", None},  # by words alone no tool may be sure enough
            "git_commit",
        ),
    ],
)
def test_the_step_an_aside_names_is_not_the_one_chosen(
    task: str,
    allowed: set[str | None],
    without_asides_tool: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    selector = Selector(builtin_cards())  # by words alone
    assert selector.select(task).chosen in allowed
    monkeypatch.setattr(pipeline, "without_asides", lambda task: task)
    assert selector.select(task).chosen == without_asides_tool
