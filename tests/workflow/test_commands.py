"""Commands run with the iteration's workspace/ directory as their sandbox's workspace:
a coding-stage agent cannot rewrite the documents or data one level up through
run_command, check_tests or check_lint; list_files stays inside the iteration."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.workflow.runner import Runner

from toolrun.permissions.approvals import AutoApprover


@pytest.fixture
def coding(run: Runner) -> Path:
    """An iteration in the coding stage with a PRD; returns its directory."""
    directory = run.start()
    run.ok("save_prd_doc", content="# PRD\n")
    run.stage("coding")
    return directory


def escapes(directory: Path) -> list[str]:
    prd = directory / "prd.md"
    return [
        "echo x > ../prd.md",
        f"echo x > {prd}",
        "echo x >> ../data/requirements.json",
        "cp ../prd.md ../design.md",
        "touch ../plan.md",
        "cd .. && echo x > prd.md",
        "cd && echo x > prd.md",
        "cd $HOME && echo x > prd.md",
        "env --chdir=.. touch plan.md",
        "git -C .. init",
        "git --work-tree=.. init",
        "make -C.. all",
        "find .. -name prd.md -delete",
        "cp x.py $HOME/../prd.md",
        "touch ~/../plan.md",
        "cp x.py `pwd`/../prd.md",
        "CDPATH=.. cd data && echo x > requirements.json",
        "CDPATH=..; cd data; echo x > requirements.json",
    ]


def untouched(directory: Path) -> None:
    assert (directory / "prd.md").read_text() == "# PRD\n"
    assert sorted(p.name for p in directory.iterdir()) == ["prd.md", "workspace"]


def test_a_coding_agent_cannot_write_above_workspace_through_run_command(
    run: Runner, coding: Path
) -> None:
    run.ctx.approver = AutoApprover()  # approves what asks; never what is dangerous

    results = {command: run("run_command", command=command) for command in escapes(coding)}

    for command, result in results.items():
        assert result.status in {"blocked", "denied"}, (command, result.status)
    assert results["echo x > ../prd.md"].status == "blocked"
    assert "redirect outside the workspace" in (results["echo x > ../prd.md"].error or "")
    left = results["cd .. && echo x > prd.md"]
    assert "may work outside the workspace: cd .." in (left.error or "")
    untouched(coding)


def test_without_the_allowlist_writes_above_workspace_wait_for_an_operator(
    tmp_path: Path,
) -> None:
    run = Runner(tmp_path, command_allowlist=None)
    directory = run.start()
    run.ok("save_prd_doc", content="# PRD\n")
    run.stage("coding")
    run.ctx.approver = AutoApprover()

    results = {command: run("run_command", command=command) for command in escapes(directory)}
    harmless = run("run_command", command="ls")

    for command, result in results.items():
        assert result.status == "denied", (command, result.status)
        assert "risk high" in (result.error or ""), command
    # As with bash: without the allowlist nothing is harmless, it asks (and is approved).
    assert harmless.status == "success"
    untouched(directory)


def test_run_command_asks_like_bash_when_the_allowlist_is_off(tmp_path: Path) -> None:
    run = Runner(tmp_path, command_allowlist=None)
    run.start()

    result = run("run_command", command="ls")  # the test's approver denies

    assert result.status == "denied"
    assert result.error is not None
    assert result.error.startswith(
        "run_command runs a command in workspace/ (risk medium: the command allowlist is off)"
    )


def test_commands_inside_workspace_run_at_once(run: Runner, coding: Path) -> None:
    made = run.ok(
        "run_command", command="mkdir -p pkg && echo 'x = 1' > pkg/mod.py && cd pkg && ls"
    )

    assert made["stdout"].split() == ["mod.py"]
    assert (coding / "workspace" / "pkg" / "mod.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("command", ["curl http://example.com", "echo x > ../prd.md"])
def test_check_tests_and_lint_go_through_the_sandbox(tmp_path: Path, command: str) -> None:
    run = Runner(tmp_path)
    directory = run.start(test_command=command, lint_command=command)
    run.ok("save_prd_doc", content="# PRD\n")

    tests, lint = run("check_tests"), run("check_lint")

    assert (tests.status, lint.status) == ("blocked", "blocked")
    untouched(directory)


def test_check_tests_that_leaves_workspace_needs_an_operator(tmp_path: Path) -> None:
    run = Runner(tmp_path)
    directory = run.start(test_command="cd .. && touch design.md")
    run.ok("save_prd_doc", content="# PRD\n")
    run.ctx.approver = AutoApprover()

    result = run("check_tests")

    assert result.status == "denied"
    untouched(directory)


@pytest.mark.parametrize("below", ["..", "../..", "data/../..", "/etc", "/"])
def test_list_files_stays_inside_the_iteration(run: Runner, below: str) -> None:
    run.start()

    result = run("list_files", below=below)

    assert result.status == "blocked"
    assert result.output is None


def test_list_files_takes_an_absolute_path_inside_the_iteration(run: Runner) -> None:
    directory = run.start()
    (directory / "workspace" / "main.py").write_text("print()\n")
    (directory / "workspace" / "link.py").symlink_to(directory / "workspace" / "main.py")

    listed = run.ok("list_files", below=str(directory / "workspace"))
    missing = run("list_files", below="nowhere")

    assert listed == {"files": [{"path": "workspace/main.py", "size": 8}], "truncated": False}
    assert missing.status == "error"
