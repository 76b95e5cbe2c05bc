"""The `toolrun` command, in-process through CliRunner and as a real console script."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import toolrun
from tests.conftest import BUILTINS
from toolrun.cli import GROUPS, app, approvals
from toolrun.cli._deferred import SubApp
from toolrun.cli.platform import _redacted
from toolrun.tools import ToolDescriptor, ToolRegistry, render_markdown

TOOLRUN = Path(sys.executable).parent / "toolrun"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
RESULT_KEYS = {"call_id", "tool_name", "tool_version", "status", "output", "error", "metadata"}


def _flat(text: str) -> str:
    """Output with colours removed and rich's line wrapping undone."""
    return " ".join(ANSI.sub("", text).split())


def invoke(*args: str, env: dict[str, str | None] | None = None) -> Result:
    result = CliRunner().invoke(app, list(args), env=env)
    # Anything but a clean exit is an exception CliRunner swallowed: a crash, not a message.
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output
    return result


def run_toolrun(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return _run_process([str(TOOLRUN), *args], cwd=cwd)


def _run_process(argv: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLRUN_")}
    completed = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in completed.stdout + completed.stderr
    return completed


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "a.txt").write_text("hello\nworld\n")
    return workspace


def _call(project: Path, name: str, arguments: dict[str, Any], *extra: str) -> Result:
    return invoke(
        "call",
        name,
        "--local",
        "--args",
        json.dumps(arguments),
        "--workspace",
        str(project),
        *extra,
    )


def listed_names(stdout: str) -> list[str]:
    names = [line.split("│")[1].strip() for line in stdout.splitlines() if "│" in line]
    return [name for name in names if name]


def test_tools_list_shows_each_tool_and_the_git_family_as_one_row() -> None:
    result = invoke("tools", "list", env={"COLUMNS": "200"})

    assert result.exit_code == 0
    singles = [name for name in BUILTINS if not name.startswith("git_")]
    assert listed_names(result.stdout) == sorted([*singles, "git"])
    git_row = next(line for line in result.stdout.splitlines() if line.startswith("│ git "))
    assert "14 tools" in git_row
    assert "read_only..admin" in git_row


def test_tools_list_all_expands_the_families() -> None:
    result = invoke("tools", "list", "--all", env={"COLUMNS": "200"})

    assert result.exit_code == 0
    assert listed_names(result.stdout) == BUILTINS


def test_tools_list_json_has_full_descriptors(registry: ToolRegistry) -> None:
    result = invoke("tools", "list", "--json")

    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert [item["name"] for item in data] == BUILTINS
    for item in data:
        tool = registry.get(item["name"])
        assert tool is not None
        assert item == tool.descriptor.model_dump(mode="json")
        assert ToolDescriptor.model_validate(item) == tool.descriptor


def test_tools_show_markdown(registry: ToolRegistry) -> None:
    read = registry.get("read")
    assert read is not None

    result = invoke("tools", "show", "read", "--markdown")

    assert result.exit_code == 0
    assert result.stdout == render_markdown(read.descriptor)


def test_tools_show_json(registry: ToolRegistry) -> None:
    read = registry.get("read")
    assert read is not None

    result = invoke("tools", "show", "read", "--json")

    assert result.exit_code == 0
    assert json.loads(result.stdout) == read.descriptor.model_dump(mode="json")


def test_tools_show_renders_docs() -> None:
    result = invoke("tools", "show", "bash", "--version", "1.0.0")

    assert result.exit_code == 0
    text = _flat(result.stdout)
    for section in ["Description", "Parameters", "Returns", "Examples", "Notes"]:
        assert section in text


def test_tools_show_unknown_tool_is_a_usage_error() -> None:
    result = invoke("tools", "show", "nope")

    assert result.exit_code == 2
    assert result.stdout == ""
    assert _flat(result.stderr) == (
        "error: unknown tool: nope; available tools: " + ", ".join(BUILTINS)
    )


def test_tools_show_unknown_version_is_a_usage_error() -> None:
    result = invoke("tools", "show", "read", "--version", "9.9.9")

    assert result.exit_code == 2
    assert "unknown tool: read@9.9.9" in _flat(result.stderr)


def test_tools_show_prints_an_unknown_name_literally() -> None:
    result = invoke("tools", "show", "[/]nope")

    assert result.exit_code == 2
    assert "unknown tool: [/]nope" in _flat(result.stderr)


def test_call_read_prints_the_content(project: Path) -> None:
    result = _call(project, "read", {"file_path": "a.txt"})

    assert result.exit_code == 0
    assert "     1\thello\n     2\tworld\n" in result.stdout
    assert _flat(result.stderr).startswith("success read 1.0.0 in ")


def test_call_json_prints_a_tool_result(project: Path) -> None:
    result = _call(project, "read", {"file_path": "a.txt", "limit": 1}, "--json")

    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert set(data) == RESULT_KEYS
    assert data["status"] == "success"
    assert data["tool_name"] == "read"
    assert data["tool_version"] == "1.0.0"
    assert data["error"] is None
    assert data["output"]["content"] == "     1\thello"
    assert isinstance(data["metadata"]["execution_time_ms"], float)


def test_call_tool_error_exits_1(project: Path) -> None:
    result = _call(project, "read", {"file_path": "missing.txt"})

    assert result.exit_code == 1
    stderr = _flat(result.stderr)
    assert stderr.startswith("error read 1.0.0 in ")
    assert "file not found: missing.txt" in stderr


def test_call_tool_error_as_json_exits_1(project: Path) -> None:
    result = _call(project, "read", {"file_path": "missing.txt"}, "--json")

    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "error"
    assert "missing.txt" in data["error"]


def test_call_error_messages_are_printed_literally(project: Path) -> None:
    result = _call(project, "read", {"file_path": "[bold]missing.txt"})

    assert result.exit_code == 1
    assert "file not found: [bold]missing.txt" in _flat(result.stderr)


def test_call_invalid_arguments_exits_1(project: Path) -> None:
    result = _call(project, "read", {"limit": "ten"})

    assert result.exit_code == 1
    assert (
        "invalid arguments: missing required parameter: file_path; "
        "parameter 'limit' must be integer, got \"ten\""
    ) in _flat(result.stderr)


def test_call_unknown_tool_exits_1_and_lists_tools(project: Path) -> None:
    result = _call(project, "nope", {})

    assert result.exit_code == 1
    available = ", ".join(BUILTINS)
    assert f"unknown tool: nope; available tools: {available}" in _flat(result.stderr)


@pytest.mark.parametrize("args", ["{bad", '{"file_path": }', ""])
def test_call_bad_json_is_a_usage_error(project: Path, args: str) -> None:
    result = invoke("call", "read", "--local", "--args", args, "--workspace", str(project))

    assert result.exit_code == 2
    assert _flat(result.stderr).startswith("error: --args is not valid JSON: ")


@pytest.mark.parametrize("args", ["[1, 2]", '"a.txt"', "3", "null"])
def test_call_args_must_be_an_object(project: Path, args: str) -> None:
    result = invoke("call", "read", "--local", "--args", args, "--workspace", str(project))

    assert result.exit_code == 2
    assert _flat(result.stderr) == (
        'error: --args must be a JSON object, e.g. \'{"file_path": "a.txt"}\''
    )


def test_call_bash_without_yes_is_denied(project: Path) -> None:
    result = _call(project, "bash", {"command": "mv a.txt ran.txt"}, "--json")

    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "denied"
    assert "pass --yes to approve" in data["error"]
    assert not (project / "ran.txt").exists()


def test_call_bash_denied_shows_the_command_literally(project: Path) -> None:
    result = _call(project, "bash", {"command": "rm [/]"})

    assert result.exit_code == 1
    assert "denied bash 1.0.0" in _flat(result.stderr)
    assert "bash runs a shell command (risk medium: rm changes" in _flat(result.stderr)
    assert "): rm [/]" in _flat(result.stderr)


def test_call_low_risk_allowlisted_bash_runs_without_asking(project: Path) -> None:
    result = _call(project, "bash", {"command": "echo [/] && touch ran.txt"})

    assert result.exit_code == 0
    assert result.stdout.startswith("── stdout ──\n[/]\n")  # labelled, printed raw (no markup)
    assert (project / "ran.txt").exists()


def test_call_dangerous_bash_needs_allow_dangerous(project: Path) -> None:
    (project / "build").mkdir()

    refused = _call(project, "bash", {"command": "rm -rf build"}, "--yes")
    assert refused.exit_code == 1
    assert "pass --allow-dangerous" in _flat(refused.stderr)
    assert (project / "build").exists()

    allowed = _call(project, "bash", {"command": "rm -rf build"}, "--yes", "--allow-dangerous")
    assert allowed.exit_code == 0, allowed.stderr
    assert not (project / "build").exists()


@pytest.mark.parametrize("flag", ["--yes", "-y"])
def test_call_bash_with_yes_runs(project: Path, flag: str) -> None:
    result = _call(project, "bash", {"command": "echo hi && touch ran.txt"}, flag)

    assert result.exit_code == 0
    assert result.stdout.startswith("── stdout ──\nhi\n")
    assert (project / "ran.txt").exists()


def test_call_bash_failure_keeps_its_output(project: Path) -> None:
    result = _call(project, "bash", {"command": "echo out; exit 3"}, "--yes", "--json")

    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "error"
    assert data["error"] == "command exited with code 3"
    assert data["output"]["stdout"].startswith("out")


def test_call_missing_workspace_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing"

    result = invoke("call", "read", "--local", "--args", "{}", "--workspace", str(missing))

    assert result.exit_code == 2
    assert _flat(result.stderr) == f"error: workspace is not a directory: {missing}"


def test_call_workspace_that_is_a_file_is_a_usage_error(project: Path) -> None:
    result = invoke(
        "call", "read", "--local", "--args", "{}", "--workspace", str(project / "a.txt")
    )

    assert result.exit_code == 2
    assert "workspace is not a directory" in _flat(result.stderr)


def test_call_through_an_unreachable_api_is_a_usage_error(project: Path) -> None:
    result = invoke(
        "call", "read", "--api", "http://127.0.0.1:9", "--args", '{"file_path": "a.txt"}'
    )

    assert result.exit_code == 2
    message = _flat(result.stderr)
    assert "cannot reach the toolrun API at http://127.0.0.1:9" in message
    assert "toolrun up" in message
    assert result.stdout == ""


def test_local_only_options_need_local(project: Path) -> None:
    result = invoke("call", "read", "--yes", "--args", '{"file_path": "a.txt"}')

    assert result.exit_code == 2
    assert "--workspace, --yes and --allow-dangerous apply to --local only" in _flat(result.stderr)


def test_call_uses_the_workspace_setting(project: Path) -> None:
    result = invoke(
        "call",
        "read",
        "--local",
        "--args",
        '{"file_path": "a.txt"}',
        env={"TOOLRUN_WORKSPACE": str(project)},
    )

    assert result.exit_code == 0
    assert "hello" in result.stdout


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("TOOLRUN_MAX_OPEN_FILES", "lots", "bad TOOLRUN_MAX_OPEN_FILES setting: "),
        # a list setting that is not JSON: once a SettingsError traceback
        (
            "TOOLRUN_NETWORK_ALLOWLIST",
            "pypi.org",
            "bad TOOLRUN_NETWORK_ALLOWLIST setting: Invalid JSON",
        ),
        (
            "toolrun_tool_policies",
            "{write: confirm}",
            "bad TOOLRUN_TOOL_POLICIES setting: Invalid JSON",
        ),
        # inside an object setting: where in it
        (
            "TOOLRUN_RISK_POLICY",
            '{"low": "never"}',
            "bad TOOLRUN_RISK_POLICY setting at low: Input",
        ),
        # a setting read from OpenTelemetry's own variable is named by it
        (
            "OTEL_SDK_DISABLED",
            "maybe",
            "bad OTEL_SDK_DISABLED setting: Input should be a valid boolean",
        ),
    ],
)
def test_a_malformed_setting_is_a_usage_error_naming_its_variable(
    project: Path, variable: str, value: str, said: str
) -> None:
    result = invoke(
        "call",
        "read",
        "--local",
        "--args",
        '{"file_path": "a.txt"}',
        "--workspace",
        str(project),
        env={variable: value},
    )

    assert result.exit_code == 2
    assert _flat(result.stderr).startswith(f"error: {said}")


def test_no_arguments_shows_help() -> None:
    result = invoke()

    assert result.exit_code == 2
    assert "Usage" in result.output


def test_help_lists_each_group_by_its_help_line() -> None:
    result = invoke("--help", env={"COLUMNS": "200"})

    assert result.exit_code == 0
    for group in GROUPS:
        assert f"{group.name} {group.help}" in _flat(result.stdout)


@pytest.mark.parametrize("group", GROUPS, ids=lambda group: group.name)
def test_a_group_page_shows_the_help_line_it_is_listed_by(group: SubApp) -> None:
    result = invoke(group.name, "--help", env={"COLUMNS": "200"})

    assert result.exit_code == 0
    assert group.help in _flat(result.stdout)


def test_a_mistyped_group_is_suggested() -> None:
    result = invoke("agent")

    assert result.exit_code == 2
    assert "Did you mean 'agents'" in _flat(result.output)


def test_console_script_lists_tools(tmp_path: Path) -> None:
    completed = run_toolrun("tools", "list", "--json", cwd=tmp_path)

    assert completed.returncode == 0
    assert [item["name"] for item in json.loads(completed.stdout)] == BUILTINS


def test_console_script_reads_a_file(project: Path) -> None:
    completed = run_toolrun(
        "call",
        "read",
        "--local",
        "--args",
        '{"file_path": "a.txt"}',
        "--workspace",
        str(project),
        cwd=project.parent,
    )

    assert completed.returncode == 0
    assert "     1\thello\n     2\tworld\n" in completed.stdout
    assert "success read 1.0.0" in completed.stderr


def test_console_script_bad_json(project: Path) -> None:
    completed = run_toolrun("call", "read", "--local", "--args", "{bad", cwd=project)

    assert completed.returncode == 2
    assert "--args is not valid JSON" in completed.stderr


def test_console_script_bash_denied_without_a_tty(project: Path) -> None:
    completed = run_toolrun(
        "call", "bash", "--local", "--json", "--args", '{"command": "mv a.txt b.txt"}', cwd=project
    )

    assert completed.returncode == 1
    assert json.loads(completed.stdout)["status"] == "denied"
    assert (project / "a.txt").exists()


def test_console_script_bash_with_yes(project: Path) -> None:
    completed = run_toolrun(
        "call", "bash", "--local", "--yes", "--args", '{"command": "echo hi"}', cwd=project
    )

    assert completed.returncode == 0
    assert completed.stdout.startswith("── stdout ──\nhi\n")


def test_console_script_unknown_tool_markup_is_not_a_crash(tmp_path: Path) -> None:
    completed = run_toolrun("tools", "show", "[/]", cwd=tmp_path)

    assert completed.returncode == 2
    assert "unknown tool: [/]" in completed.stderr


def test_console_script_float_arguments_are_not_a_crash(project: Path) -> None:
    # A crash inside a tool must come back as a result, not a traceback on stderr.
    completed = run_toolrun(
        "call", "read", "--local", "--args", '{"file_path": "a.txt", "limit": 1.0}', cwd=project
    )

    assert "internal error" not in completed.stderr
    assert completed.returncode in {0, 1}


CRASHING_READ = """
import sys
from toolrun.cli import main
from toolrun.tools.builtin.read import ReadTool

def crash(self, arguments, ctx):
    raise RuntimeError("kaboom")

ReadTool.run = crash
sys.argv = ["toolrun", "call", "read", "--local", "--args", '{"file_path": "a.txt"}']
main()
"""


def test_a_crashing_tool_prints_a_result_not_a_traceback(project: Path) -> None:
    completed = _run_process([sys.executable, "-c", CRASHING_READ], cwd=project)

    assert completed.returncode == 1
    assert "internal error in read: RuntimeError('kaboom')" in _flat(completed.stderr)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("redis://user:s3cret@host:1/2", "redis://user:***@host:1/2"),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
    ],
)
def test_redis_passwords_are_never_printed(url: str, shown: str) -> None:
    assert _redacted(url) == shown


def test_approval_review_shows_terminal_escapes_as_text() -> None:
    shown = approvals.shown("rm -rf x\x1b[1A\x1b[2K\rgit status\n[bold]")

    assert "\x1b" not in shown
    assert "\r" not in shown
    assert "\n" not in shown
    assert shown.startswith("rm -rf x\\x1b")
    assert "\\[bold]" in shown  # no markup either


def select_here(*args: str, home: Path) -> Result:
    return invoke("select", "--local", *args, env={"TOOLRUN_HOME": str(home)})


def test_select_local_picks_a_registry_tool_with_its_arguments(tmp_path: Path) -> None:
    shown = select_here("show the last 5 commits", home=tmp_path)
    found = json.loads(select_here("show the last 5 commits", "--json", home=tmp_path).stdout)

    assert shown.exit_code == 0, shown.output
    for step in ("1 scenario", "2 intents", "3 matching by", "4 evaluation", "5 arguments"):
        assert step in shown.output
    assert (found["chosen"], found["arguments"], found["valid"]) == (
        "git_log",
        {"max_count": 5},
        True,
    )
    assert {"1_scenario", "2_intents", "3_matching", "4_evaluation"} <= set(found["trace"])


def test_select_local_over_a_supplied_list(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather forecast for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
    tools.write_text(json.dumps([weather]))

    found = select_here(
        "What is the weather forecast in 'Lisbon'?", "--tools", str(tools), "--json", home=tmp_path
    )

    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["arguments"] == {"city": "Lisbon"}


def test_select_shows_each_candidates_confidence_and_takes_the_bar(tmp_path: Path) -> None:
    task = "show the last 5 commits"
    shown = select_here(task, home=tmp_path)
    found = json.loads(select_here(task, "--json", home=tmp_path).stdout)
    strict = select_here(task, "--min-confidence", "0.999", home=tmp_path)
    out_of_range = select_here(task, "--min-confidence", "1.5", home=tmp_path)

    best = found["candidates"][0]
    assert "confidence" in shown.output
    assert f"{best['confidence']:.2f}" in shown.output
    assert found["reason"] == f"git_log: best match (confidence {best['confidence']:.2f})"
    assert strict.exit_code == 1
    assert "no suitable tool: the best match, git_log" in _flat(strict.output)
    assert out_of_range.exit_code == 2


@pytest.mark.parametrize("as_json", [[], ["--json"]])
def test_select_local_with_no_suitable_tool_exits_1(tmp_path: Path, as_json: list[str]) -> None:
    nothing = select_here("translate this poem into French", *as_json, home=tmp_path)

    assert nothing.exit_code == 1
    assert "no suitable tool" in nothing.output


def test_select_local_refuses_a_bad_tool_list_and_the_api_option(tmp_path: Path) -> None:
    twice = tmp_path / "twice.json"
    twice.write_text(json.dumps([{"name": "x"}, {"name": "x"}]))

    duplicated = select_here("do x", "--tools", str(twice), home=tmp_path)
    both = select_here("do x", "--api", "http://127.0.0.1:1", home=tmp_path)

    assert duplicated.exit_code == 2
    assert "--tools: tools: two tools have the same name" in _flat(duplicated.output)
    assert both.exit_code == 2
    assert "--api does not apply to --local" in _flat(both.output)


def test_results_are_shown_for_a_person(project: Path) -> None:
    (project / "src").mkdir()
    for name in ("a.py", "b.py"):
        (project / "src" / name).write_text("def f():\n    return 1\n")

    counted = _call(project, "grep", {"pattern": "def", "output_mode": "count"})
    assert counted.exit_code == 0
    # The status line first, the counts as a table (not indented JSON), the rest on a line.
    said = _flat(counted.stderr)
    assert said.startswith("success grep")
    assert "mode count · returned 2 · total 2 · truncated false" in said
    rows = [line.split() for line in counted.stdout.splitlines() if ".py" in line]
    assert sorted(row[1] for row in rows) == ["src/a.py", "src/b.py"]
    assert all(row[3] == "1" for row in rows)

    listed = _call(project, "glob", {"pattern": "**/*.py"})
    assert sorted(listed.stdout.split()) == ["src/a.py", "src/b.py"]  # one name a line

    failed = _call(project, "bash", {"command": "echo out; echo oops >&2; exit 3"}, "--yes")
    assert failed.exit_code == 1
    assert failed.stdout == "── stdout ──\nout\n── stderr ──\noops\n"
    assert "exit_code 3" in _flat(failed.stderr)


def test_help_shows_flags_as_flags() -> None:
    result = invoke("call", "--help", env={"COLUMNS": "120"})

    assert result.exit_code == 0
    flat = _flat(result.output)
    assert "--local Run in this process" in flat  # no "<bool>", as if it took a value
    assert "<bool>" not in flat
    assert "--wait <float>" in flat


def test_version() -> None:
    result = invoke("--version")

    assert result.exit_code == 0
    assert result.output.strip() == f"toolrun {toolrun.__version__}"
