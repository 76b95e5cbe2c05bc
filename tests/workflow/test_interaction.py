"""copy_workspace_to_project: each file replaced by a rename (never written in place),
dot-files, dot-directories and links skipped, and targets, sources and destinations that leave the
project or pass through a link refused before anything is copied."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.workflow.runner import Runner

from toolrun.permissions.approvals import AutoApprover


@pytest.fixture
def work(run: Runner) -> Path:
    """The iteration's workspace/ with a module, and an approver that lets delivery run."""
    directory = run.start()
    work = directory / "workspace"
    (work / "pkg").mkdir()
    (work / "pkg" / "export.py").write_text("print('csv')\n")
    run.ctx.approver = AutoApprover(dangerous=True)
    return work


def test_files_are_replaced_by_a_rename_never_written_in_place(run: Runner, work: Path) -> None:
    existing = run.workspace / "pkg" / "export.py"
    existing.parent.mkdir()
    existing.write_text("old\n")
    os.link(existing, run.workspace / "old-export.py")  # the old file, by another name

    copied = run.ok("copy_workspace_to_project", confirm=True)

    assert copied["copied"] == ["pkg/export.py"]
    assert existing.read_text() == "print('csv')\n"
    assert (run.workspace / "old-export.py").read_text() == "old\n"
    assert [p.name for p in existing.parent.iterdir()] == ["export.py"]  # no temporary left


def test_dot_directories_and_links_are_skipped_and_listed(run: Runner, work: Path) -> None:
    (work / ".git").mkdir()
    (work / ".git" / "config.toml").write_text("[core]\n")
    (work / ".github" / "workflows").mkdir(parents=True)
    (work / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    (work / "linked").symlink_to(run.outside)
    (work / ".gitlab-ci.yml").write_text("job: {}\n")

    copied = run.ok("copy_workspace_to_project", confirm=True, target="out")

    assert copied["copied"] == ["out/pkg/export.py"]
    assert sorted(copied["skipped"]) == [".git/", ".github/", ".gitlab-ci.yml", "linked/"]
    assert sorted(p.name for p in (run.workspace / "out").iterdir()) == ["pkg"]


def test_a_target_through_a_link_is_refused(run: Runner, work: Path) -> None:
    (run.workspace / "src").symlink_to(run.outside)
    (run.workspace / "inner").symlink_to(run.workspace / ".iterations")

    outside = run("copy_workspace_to_project", confirm=True, target="src")
    inside = run("copy_workspace_to_project", confirm=True, target="inner")

    assert (outside.status, inside.status) == ("blocked", "blocked")
    assert outside.error == "src is a symbolic link: the workflow tools never follow links"
    assert not (run.outside / "pkg").exists()


def test_absolute_targets_are_taken_only_inside_the_project(run: Runner, work: Path) -> None:
    inside = run.ok("copy_workspace_to_project", confirm=True, target=str(run.workspace / "abs"))
    outside = run("copy_workspace_to_project", confirm=True, target=str(run.outside / "abs"))

    assert inside["copied"] == ["abs/pkg/export.py"]
    assert outside.status == "blocked"
    assert not (run.outside / "abs").exists()


def _linked_away(run: Runner, destination: Path) -> None:
    destination.symlink_to(run.outside / "victim.py")


@pytest.mark.parametrize(
    ("plant", "status", "error"),
    [
        (
            _linked_away,
            "blocked",
            "pkg/export.py is a symbolic link: the workflow tools never follow links",
        ),
        (lambda _run, d: d.mkdir(), "error", "pkg/export.py is a directory: nothing was copied"),
    ],
    ids=["link", "directory"],
)
def test_a_bad_destination_stops_the_copy_before_anything_is_written(
    run: Runner, work: Path, plant: Callable[[Runner, Path], None], status: str, error: str
) -> None:
    (work / "a.py").write_text("a\n")
    victim = run.outside / "victim.py"
    victim.write_text("mine\n")
    (run.workspace / "pkg").mkdir()
    plant(run, run.workspace / "pkg" / "export.py")

    result = run("copy_workspace_to_project", confirm=True)

    assert (result.status, result.error) == (status, error)
    assert not (run.workspace / "a.py").exists()  # nothing was copied
    assert victim.read_text() == "mine\n"
