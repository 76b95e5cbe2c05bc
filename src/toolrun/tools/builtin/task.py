"""task: delegate a piece of work to a sub-agent with fewer tools and permissions.

The sub-agent machinery (its model client, httpx, and work loop, which brings the
database's models) is imported by a call of this tool, not with the registry."""

# ruff: noqa: PLC0415 - see the module docstring

from __future__ import annotations

import time
from typing import Any

from toolrun.config import Settings
from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import DELEGATION_QUEUE, PermissionLevel
from toolrun.subagents.definition import AGENTS_DIR, SubAgentError
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolDescriptor, ToolExample

MAX_TIMEOUT_S = 1800.0
_TRACE_CALL = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "tool": {"type": "string"},
        "arguments": {"type": ["object", "null"]},
        "call_id": {"type": ["string", "null"], "description": "Its call (and history row)."},
        "status": {"type": "string"},
        "error": {"type": ["string", "null"]},
    },
}

DESCRIPTOR = ToolDescriptor.builtin(
    name="task",
    version="1.0.0",
    description=(
        "Delegate a task to a sub-agent: a model with its own system prompt and a narrower "
        "set of tools, which works through tool calls until it has an answer. Sub-agents "
        f"are defined in {AGENTS_DIR}/NAME.md (Markdown with YAML front matter) or "
        "registered through the API. Returns the sub-agent's final answer and a trace of "
        "its turns, tool calls and tokens."
    ),
    parameters={
        "type": "object",
        "properties": {
            "agent": {
                "type": "string",
                "pattern": "^[a-z0-9][a-z0-9_.-]{0,63}$",
                "description": "The sub-agent's name.",
            },
            "prompt": {
                "type": "string",
                "minLength": 1,
                "maxLength": 100_000,
                "description": "The task, with everything the sub-agent needs to know.",
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT_S,
                "default": 300,
                "description": "Seconds for the whole task, approvals of its calls included.",
            },
        },
        "required": ["agent", "prompt"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "agent": {"type": "string"},
            "answer": {"type": ["string", "null"], "description": "The final answer."},
            "stop_reason": {"enum": ["answered", "max_turns", "failed"]},
            "turns": {"type": "integer", "description": "Model replies."},
            "tool_calls": {"type": "integer"},
            "usage": {
                "type": "object",
                "description": "Tokens summed over the turns, as the endpoint counts them.",
                "additionalProperties": {"type": "integer"},
            },
            "ceiling": {"type": "string", "description": "The sub-agent's effective ceiling."},
            "tools": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The tools shown to the model.",
            },
            "trace": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "turn": {"type": "integer"},
                        "content": {"type": ["string", "null"]},
                        "tool_calls": {"type": "array", "items": _TRACE_CALL},
                        "usage": {"type": "object"},
                    },
                },
            },
        },
    },
    examples=[
        ToolExample(
            description="Have a read-only sub-agent find where a setting is used",
            arguments={
                "agent": "searcher",
                "prompt": "Where is TOOLRUN_WORKSPACE read? Answer with file:line places.",
            },
        ),
        ToolExample(
            description="Ask a reviewer sub-agent about a change, with 10 minutes for it",
            arguments={
                "agent": "reviewer",
                "prompt": "Review src/app.py for unhandled errors.",
                "timeout": 600,
            },
        ),
        ToolExample(
            description="Summarise the project's layout",
            arguments={"agent": "explorer", "prompt": "Describe the layout of src/ briefly."},
        ),
        ToolExample(
            description="Hand a piece of work to a sub-agent and get its answer",
            arguments={
                "agent": "writer",
                "prompt": "Write a docstring for every public function in src/util.py.",
            },
        ),
        ToolExample(
            description="Ask a sub-agent to look into a problem and report back",
            arguments={
                "agent": "investigator",
                "prompt": "Find out why the tests in tests/api fail and report the cause.",
            },
        ),
    ],
    notes=[
        "Delegation never widens permissions: the sub-agent's tools are its own filter ∩ "
        "the calling agent's tool set, its ceiling the lower of the two, and the caller's "
        "version pins hold. The task tool itself is never given to a sub-agent.",
        "Tools outside that set are never shown to the model; a call of one anyway is "
        "refused (recorded as blocked) and the model gets the refusal as the tool's answer.",
        "Every call of the sub-agent goes through the platform like any other: validated, "
        "checked, parked for approval where its policy says so, and recorded in the history "
        "with the calling agent's id, the sub-agent's name and this call's id as parent "
        "(`GET /v1/history?parent=CALL_ID`).",
        "The model is any OpenAI-compatible Chat Completions endpoint: TOOLRUN_MODEL_BASE_URL, "
        "TOOLRUN_MODEL (a definition's `model` overrides it), TOOLRUN_MODEL_API_KEY.",
        "Calls run on the delegation workers (`toolrun worker --delegation`), never on the "
        "workers their sub-agent's calls need.",
    ],
    permission=PermissionLevel.READ_ONLY,
    tags=["delegation", "agent"],
    category="delegation",
    time_limit_s=MAX_TIMEOUT_S,
)


class TaskTool(Tool):
    descriptor = DESCRIPTOR

    def queue(self, arguments: dict[str, Any]) -> str:
        return DELEGATION_QUEUE

    def time_limit_s(self, arguments: dict[str, Any], settings: Settings) -> float:
        return float(arguments.get("timeout", 300))

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        from toolrun.subagents.chat import ChatModel
        from toolrun.subagents.loop import SubAgentRun

        deadline = time.monotonic() + self.time_limit_s(arguments, ctx.settings)
        if ctx.delegation is None:
            raise ToolExecutionError(
                "task calls run on the delegation workers (`toolrun worker --delegation`) "
                "or with `toolrun call --local`"
            )
        try:
            agent = ctx.delegation.catalog(ctx.workspace).find(arguments["agent"])
        except SubAgentError as exc:
            raise ToolExecutionError(str(exc)) from exc
        chat = ChatModel.from_settings(ctx.settings, agent.model)
        try:
            work = SubAgentRun(agent, ctx.delegation, chat, ctx, ctx.call_id)
            output = work.run(arguments["prompt"], deadline)
        finally:
            chat.close()
        return ToolOutput(output)
