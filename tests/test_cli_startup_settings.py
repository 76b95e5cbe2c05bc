"""What the CLI reads without the Settings model or the tool model agrees with what those
say: the four settings of a command that only talks to the API (as read, and as located
from a subdirectory next to a running platform), and the statuses its options name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolrun.cli._locate import announce, hold, locate
from toolrun.cli._settings import ApiSettings
from toolrun.cli._statuses import CallStatus, OpenStatus
from toolrun.config import Settings
from toolrun.tools.model import ToolResult, ToolStatus

READ = ("workspace", "home", "api", "token")


@pytest.fixture
def clean(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No TOOLRUN_* setting in any spelling; a state directory and current directory of
    the test's own."""
    for name in list(os.environ):
        if name.lower().startswith("toolrun_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def agree(light: ApiSettings, full: Settings) -> None:
    for name in READ:
        assert getattr(light, name) == getattr(full, name), name
    assert light.model_fields_set == full.model_fields_set & set(READ)
    assert light.platform_home == full.platform_home
    assert light.admin_token_path == full.admin_token_path


@pytest.mark.parametrize(
    "environment",
    [
        {},
        {"TOOLRUN_API": "http://10.0.0.5:8001", "TOOLRUN_TOKEN": "trk_abc"},
        {"toolrun_home": "/srv/toolrun-home", "Toolrun_Api": "http://h:1"},  # any case
        {"TOOLRUN_WORKSPACE": "sub/dir", "XDG_STATE_HOME": "relative/state"},
        {"TOOLRUN_HOME": "", "TOOLRUN_TOKEN": "", "TOOLRUN_API": ""},
        {"TOOLRUN_WORKSPACE": "/", "TOOLRUN_MAX_OPEN_FILES": "7"},
    ],
)
def test_the_light_reader_reads_the_four_settings_as_settings_does(
    clean: Path, monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    agree(ApiSettings.from_environment(), Settings())


def test_both_find_the_same_workspace_and_running_platform(
    clean: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = clean / "project"
    (project / "src" / "deep").mkdir(parents=True)
    home = Settings(workspace=project).platform_home
    home.mkdir(parents=True)
    (home / "admin.token").write_text("the-admin-token\n")
    assert hold(home)
    announce(home, "http://127.0.0.1:8001")
    monkeypatch.chdir(project / "src" / "deep")

    light, full = locate(ApiSettings.from_environment()), locate(Settings())

    agree(light, full)
    assert light.workspace == project
    assert light.api == "http://127.0.0.1:8001"
    assert "api" in light.model_fields_set  # `toolrun agents` then goes through the API


def test_the_cli_statuses_are_the_tool_models() -> None:
    still_open = [
        status
        for status in ToolStatus
        if not ToolResult(call_id="c", tool_name="t", status=status).final
    ]

    assert [status.value for status in CallStatus] == [status.value for status in ToolStatus]
    assert [status.value for status in OpenStatus] == [status.value for status in still_open]
