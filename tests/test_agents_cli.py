"""`toolrun agents` with no platform running: on the database directly, with the tool set
checked against the local tools."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from toolrun.cli import app


def run(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    env = {"TOOLRUN_HOME": str(tmp_path / "home"), "TOOLRUN_WORKSPACE": str(tmp_path)}
    result = CliRunner().invoke(app, ["agents", *args], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def test_agents_are_created_listed_and_revoked_on_the_database(tmp_path: Path) -> None:
    code, token, said = run(
        tmp_path, "create", "bot", "--ceiling", "read_only", "--tools", "read,tag:search"
    )
    assert code == 0, said
    assert "created agent bot (agent, ceiling read_only)" in said
    assert len(token.strip()) > 20
    home = tmp_path / "home"  # made by the command: its owner's only, as `toolrun up` makes it
    assert home.stat().st_mode & 0o777 == 0o700
    assert (home / "toolrun.db").stat().st_mode & 0o077 == 0

    code, listed, _ = run(tmp_path, "list", "--json")
    assert code == 0
    [bot] = json.loads(listed)
    assert bot == {
        "name": "bot",
        "role": "agent",
        "ceiling": "read_only",
        "tools": ["read", "tag:search"],
        "pins": [],
        "quota": {  # the platform's defaults
            "rate_per_s": 0,
            "burst": 0,
            "max_in_flight": 0,
            "max_queued": 1000,
            "own": [],
        },
    }
    assert run(tmp_path, "revoke", "bot")[0] == 0
    code, _, said = run(tmp_path, "revoke", "bot")
    assert code == 2
    assert "no agent named 'bot'" in said


def test_a_tool_set_naming_no_tool_is_refused(tmp_path: Path) -> None:
    code, out, said = run(
        tmp_path, "create", "bot", "--ceiling", "read_only", "--tools", "raed,tag:serch,tag:nothing"
    )

    assert code == 2
    assert out == ""
    assert (
        "the tool set names no registered tool or tag: raed (did you mean read?), "
        "tag:serch (did you mean tag:search?), tag:nothing"
    ) in said
    assert json.loads(run(tmp_path, "list", "--json")[1]) == []


def test_quotas_are_set_shown_and_given_back_to_the_defaults(tmp_path: Path) -> None:
    code, _, said = run(tmp_path, "create", "bot", "--ceiling", "read_only", "--rate", "5")
    assert code == 0, said

    code, shown, said = run(tmp_path, "quota", "bot", "--max-in-flight", "20", "--json")
    assert code == 0, said
    assert json.loads(shown)["quota"] == {
        "rate_per_s": 5.0,
        "burst": 10.0,  # twice the rate
        "max_in_flight": 20,
        "max_queued": 1000,
        "own": ["rate_per_s", "max_in_flight"],
    }

    code, shown, said = run(tmp_path, "quota", "bot", "--reset", "rate_per_s")
    assert code == 0, said
    assert "rate_per_s     no limit  (default)" in shown
    assert "max_in_flight  20\n" in shown
    assert "usage      (the platform is not running)" in shown
    code, shown, _ = run(tmp_path, "show", "bot")
    assert code == 0
    assert "max_in_flight  20" in shown


def test_a_quota_change_without_a_limit_or_for_nobody_is_refused(tmp_path: Path) -> None:
    assert run(tmp_path, "create", "bot", "--ceiling", "read_only")[0] == 0

    nothing = run(tmp_path, "quota", "bot")
    nobody = run(tmp_path, "quota", "nobody", "--rate", "1")
    unknown = run(tmp_path, "quota", "bot", "--reset", "speed")
    negative = run(tmp_path, "quota", "bot", "--rate", "-1")
    endless = run(tmp_path, "quota", "bot", "--rate", "nan")
    huge = run(tmp_path, "quota", "bot", "--max-in-flight", "3000000000")
    reserved = run(tmp_path, "create", "me", "--ceiling", "read_only")

    assert [nothing[0], nobody[0], unknown[0], negative[0]] == [2, 2, 2, 2]
    assert "give a limit to set" in nothing[2]
    assert "no agent named 'nobody'" in nobody[2]
    assert "no such quota: speed" in unknown[2]
    assert "-1" in negative[2]
    assert endless[0] == 2
    assert "rate_per_s must be 0 (no limit) or between 0.001 and 1e+06, not nan" in endless[2]
    assert huge[0] == 2
    assert "max_in_flight must be between 0 (no limit) and 2147483647" in huge[2]
    assert reserved[0] == 2
    assert "agent name 'me' is reserved" in reserved[2]
