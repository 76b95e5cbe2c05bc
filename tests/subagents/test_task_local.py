"""The task tool in this process (`toolrun call --local`): a scripted model over HTTP asks
for tool calls, which run as the sub-agent, with its narrowed tools and ceiling."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.scripted_model import USAGE, ScriptedModel, answer, tool_calls

from toolrun.config import Settings
from toolrun.permissions.approvals import AutoApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.subagents.delegation import LocalDelegation
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult, ToolStatus

READ_ONLY_TOOLS = [
    "git_blame",
    "git_branches",
    "git_diff",
    "git_log",
    "git_show",
    "git_status",
    "glob",
    "grep",
    "http_fetch",
    "lsp",
    "read",
    "search",
]


@pytest.fixture(scope="module")
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as server:
        yield server


@pytest.fixture
def run_task(workspace: Path, model: ScriptedModel) -> Iterator[Any]:
    (workspace / "app.py").write_text("import os\nROOT = os.environ['TOOLRUN_WORKSPACE']\n")
    settings = Settings(
        workspace=workspace,
        model_base_url=model.url,
        model="scripted",
        model_api_key="sk-test",  # type: ignore[arg-type]  # pydantic makes it a SecretStr
    )
    registry = ToolRegistry.with_builtins()
    executor = Executor(registry)

    def run(
        agent: str, prompt: str = "Where is TOOLRUN_WORKSPACE read?", **extra: Any
    ) -> ToolResult:
        ctx = ToolContext.create(
            settings,
            approver=AutoApprover(),
            call_id="parent-call",
            delegation=LocalDelegation(registry, None, executor=executor),
        )
        arguments = {"agent": agent, "prompt": prompt, **extra}
        return executor.execute(ToolCall(tool_name="task", arguments=arguments), ctx)

    return run


def define(workspace: Path, name: str, header: str = "", prompt: str = "You search.") -> None:
    folder = workspace / ".toolrun" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: {name}\n{header}---\n{prompt}\n"
    (folder / f"{name}.md").write_text(text)


def test_the_sub_agent_searches_and_answers(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "searcher", "tools: [grep, read, write]\n", "You are a code searcher.")
    model.script(
        tool_calls(("grep", {"pattern": "TOOLRUN_WORKSPACE"})),
        answer("app.py:2 reads it."),
    )

    result = run_task("searcher")

    assert result.status is ToolStatus.SUCCESS, result.error
    output = result.output
    assert (output["answer"], output["stop_reason"]) == ("app.py:2 reads it.", "answered")
    assert (output["turns"], output["tool_calls"]) == (2, 1)
    assert output["usage"] == {name: 2 * count for name, count in USAGE.items()}
    [grep] = output["trace"][0]["tool_calls"]
    assert (grep["tool"], grep["status"]) == ("grep", "success")
    first, second = model.requests
    assert first["model"] == "scripted"
    assert first["messages"][:2] == [
        {"role": "system", "content": "You are a code searcher."},
        {"role": "user", "content": "Where is TOOLRUN_WORKSPACE read?"},
    ]
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_0"
    assert "app.py" in tool_message["content"]
    assert model.headers[0]["Authorization"] == "Bearer sk-test"


def test_only_the_filtered_tools_within_the_ceiling_are_offered(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    """write is in its filter but above its (read_only) ceiling: never shown."""
    define(workspace, "searcher", "tools: [grep, read, write]\n")
    model.script(answer("done"))

    result = run_task("searcher")

    assert result.output["tools"] == ["grep", "read"]
    assert model.offered_tools() == ["grep", "read"]
    assert result.output["ceiling"] == "read_only"


def test_every_tool_means_every_tool_within_the_ceiling_but_never_task(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "explorer", "tools: all\n")
    define(workspace, "builder", "tools: all\nceiling: admin\n")
    model.script(answer("a"), answer("b"))

    run_task("explorer")
    run_task("builder")

    assert model.offered_tools(0) == READ_ONLY_TOOLS
    assert "bash" in model.offered_tools(1)
    assert "task" not in model.offered_tools(1)


def test_a_call_of_a_hidden_tool_is_refused_and_the_model_is_told(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "searcher", "tools: [grep, read]\n")
    model.script(
        tool_calls(
            ("write", {"file_path": "pwned.txt", "content": "x"}), ("glob", {"pattern": "*"})
        ),
        answer("I could not write."),
    )

    result = run_task("searcher")

    assert result.status is ToolStatus.SUCCESS
    above, outside = result.output["trace"][0]["tool_calls"]
    assert (above["status"], outside["status"]) == ("blocked", "blocked")
    assert "needs read_write, has read_only" in above["error"]
    assert "glob is not in the tool set of agent local/searcher" in outside["error"]
    assert not (workspace / "pwned.txt").exists()
    assert '"status": "blocked"' in model.requests[1]["messages"][-1]["content"]


def test_the_task_tool_itself_cannot_be_called_by_a_sub_agent(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "looper", "tools: all\nceiling: admin\n")
    model.script(tool_calls(("task", {"agent": "looper", "prompt": "again"})), answer("no"))

    result = run_task("looper")

    [nested] = result.output["trace"][0]["tool_calls"]
    assert nested["status"] == "blocked"
    assert len(model.requests) == 2  # no nested sub-agent asked the model anything


def test_max_turns_ends_the_task_with_its_trace(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "searcher", "tools: [glob]\nmax_turns: 2\n")
    model.script(*[tool_calls(("glob", {"pattern": "*.py"}))] * 3)

    result = run_task("searcher")

    assert result.status is ToolStatus.ERROR
    assert result.error == "sub-agent searcher used its 2 turns without a final answer"
    assert (result.output["stop_reason"], result.output["turns"]) == ("max_turns", 2)
    assert len(model.requests) == 2


def test_bad_tool_arguments_are_the_model_s_problem_not_a_run(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "searcher", "tools: [read]\n")
    model.script(
        tool_calls(("read", "{not json"), ("read", {"file_path": 7}), ("nope", {})),
        answer("giving up"),
    )

    result = run_task("searcher")

    broken, invalid, unknown = result.output["trace"][0]["tool_calls"]
    assert broken["error"].startswith("the arguments are not valid JSON")
    assert invalid["error"].startswith("invalid arguments: ")
    assert unknown["error"] == "unknown tool: nope; available tools: read"
    assert [m["role"] for m in model.requests[1]["messages"][-3:]] == ["tool"] * 3


def test_a_failing_model_fails_the_task_clearly(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "searcher")
    model.script(tool_calls(("glob", {"pattern": "*"})), (503, '{"error": "overloaded"}'))

    result = run_task("searcher")

    assert result.status is ToolStatus.ERROR
    assert 'answered 503: {"error": "overloaded"}' in (result.error or "")
    assert (result.output["stop_reason"], result.output["turns"]) == ("failed", 1)


def test_an_answer_that_is_not_a_chat_completion_is_an_error(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "searcher")
    model.script((200, '{"choices": []}'))

    result = run_task("searcher")

    assert "did not answer with a chat completion" in (result.error or "")


def test_an_unknown_sub_agent_is_named(run_task: Any, workspace: Path) -> None:
    define(workspace, "searcher")

    result = run_task("reviewer")

    assert result.status is ToolStatus.ERROR
    assert "no sub-agent named 'reviewer'" in (result.error or "")
    assert "known: searcher" in (result.error or "")


def test_without_a_model_the_settings_to_set_are_named(
    workspace: Path, registry: ToolRegistry
) -> None:
    define(workspace, "searcher")
    executor = Executor(registry)
    ctx = ToolContext.create(
        Settings(workspace=workspace),
        delegation=LocalDelegation(registry, None, executor=executor),
    )

    result = executor.execute(
        ToolCall(tool_name="task", arguments={"agent": "searcher", "prompt": "p"}), ctx
    )

    assert "set TOOLRUN_MODEL_BASE_URL and TOOLRUN_MODEL" in (result.error or "")


def test_the_definition_s_model_overrides_the_default(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "searcher", "model: bigger\n")
    model.script(answer("ok"))

    run_task("searcher")

    assert model.requests[0]["model"] == "bigger"


def test_the_timeout_stops_a_sub_agent_that_goes_on(
    run_task: Any, model: ScriptedModel, workspace: Path
) -> None:
    define(workspace, "sleeper", "tools: all\nceiling: execute\n")
    model.script(tool_calls(("bash", {"command": "sleep 3"})), answer("late"))

    result = run_task("sleeper", timeout=1)

    assert result.status is ToolStatus.TIMEOUT
    assert result.error == "the sub-agent ran out of time"
    assert result.output["turns"] == 1


def test_a_task_without_delegation_says_where_it_runs(call_tool: Any) -> None:
    result = call_tool("task", agent="searcher", prompt="p")

    assert result.status is ToolStatus.ERROR
    assert "toolrun worker --delegation" in (result.error or "")


def test_the_ceiling_is_part_of_the_descriptor(registry: ToolRegistry) -> None:
    tool = registry.get("task")

    assert tool is not None
    assert tool.descriptor.permission is PermissionLevel.READ_ONLY
    assert tool.queue({}) == "tools.delegation"
