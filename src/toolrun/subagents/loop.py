"""A sub-agent at work: model turns and the tool calls they ask for, until the model
answers without calling a tool, `max_turns` replies have gone by, or time runs out.

The sub-agent acts for the agent that made the Task call, never with more than it has:
its tools are its own filter ∩ the parent's tool set, its ceiling the lower of the two.
Only those tools are shown to the model; a call of any other is refused by the same
check as every call (recorded as blocked), and the model gets that refusal as the tool's
answer.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from toolrun.errors import ToolExecutionError, ToolTimeout
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role
from toolrun.subagents.chat import ChatModel, Reply, ToolRequest, function_spec
from toolrun.subagents.definition import SubAgent
from toolrun.tools.base import ToolContext
from toolrun.tools.delegating import Delegating
from toolrun.tools.model import ToolCall, ToolDescriptor, ToolResult

TASK_TOOL = "task"  # never given to a sub-agent: delegation does not nest
MAX_TOOL_ANSWER_CHARS = 30_000
LOCAL = "local"  # the parent of a local run, which has no agent profile


def delegated_profile(
    agent: SubAgent, parent: AgentProfile | None, tools: list[ToolDescriptor]
) -> AgentProfile:
    """The profile the sub-agent's calls are checked against: acting for `parent` (its
    id, so its calls are the parent's in the history), with the lower ceiling and the
    tools both filters allow, spelled out by name; the parent's version pins hold."""
    ceiling = agent.ceiling
    if parent is not None and parent.ceiling.rank < ceiling.rank:
        ceiling = parent.ceiling
    allowed = frozenset(
        d.name
        for d in tools
        if d.name != TASK_TOOL
        and agent.sees(d)
        and ceiling.allows(d.permission)
        and (parent is None or parent.sees(d))
    )
    return AgentProfile(
        id=LOCAL if parent is None else parent.id,
        name=f"{LOCAL if parent is None else parent.name}/{agent.name}",
        role=Role.AGENT,
        ceiling=ceiling,
        tools=allowed,
        pins=() if parent is None else parent.pins,
    )


@dataclass
class Progress:
    """What the sub-agent has done so far; `output` is the Task call's output."""

    agent: SubAgent
    ceiling: PermissionLevel
    tools: list[str]
    trace: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    calls: int = 0

    def add_turn(self, reply: Reply) -> dict[str, Any]:
        for name, count in reply.usage.items():
            self.usage[name] = self.usage.get(name, 0) + count
        turn: dict[str, Any] = {
            "turn": len(self.trace) + 1,
            "content": reply.content,
            "tool_calls": [],
            "usage": reply.usage,
        }
        self.trace.append(turn)
        return turn

    def output(self, answer: str | None, stop_reason: str) -> dict[str, Any]:
        return {
            "agent": self.agent.name,
            "answer": answer,
            "stop_reason": stop_reason,
            "turns": len(self.trace),
            "tool_calls": self.calls,
            "usage": self.usage,
            "ceiling": self.ceiling.value,
            "tools": self.tools,
            "trace": self.trace,
        }


@dataclass
class SubAgentRun:
    """One Task call's sub-agent, with where its calls go."""

    agent: SubAgent
    delegation: Delegating
    chat: ChatModel
    ctx: ToolContext
    parent_call_id: str | None

    def run(self, prompt: str, deadline: float) -> dict[str, Any]:
        """The sub-agent's answer and trace (the Task call's output).

        Raises:
            ToolExecutionError: no answer within max_turns, the model failed, or the parent
                agent was revoked (the trace so far is the error's output).
            ToolTimeout: `deadline` passed first.
        """
        parent = self.delegation.parent(self.ctx.agent_id)
        tools = self.delegation.tools()
        profile = delegated_profile(self.agent, parent, tools)
        shown = [d for d in tools if profile.refusal(d) is None]
        progress = Progress(self.agent, profile.ceiling, [d.name for d in shown])
        specs = [function_spec(d) for d in shown]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.agent.prompt},
            {"role": "user", "content": prompt},
        ]
        try:
            for _ in range(self.agent.max_turns):
                reply = self.chat.reply(messages, specs, timeout_s=_left(deadline))
                turn = progress.add_turn(reply)
                messages.append(reply.message)
                if not reply.tool_calls:
                    return progress.output(reply.content, "answered")
                # Looked up again each turn: a revoked parent's sub-agent stops.
                parent = self.delegation.parent(self.ctx.agent_id)
                profile = delegated_profile(self.agent, parent, tools)
                answers = self._tool_answers(reply.tool_calls, profile, deadline, turn)
                progress.calls += len(reply.tool_calls)
                messages.extend(answers)
                _left(deadline)
        except ToolExecutionError as exc:
            exc.output = progress.output(None, "failed")
            raise
        raise ToolExecutionError(
            f"sub-agent {self.agent.name} used its {self.agent.max_turns} turns "
            "without a final answer",
            output=progress.output(None, "max_turns"),
        )

    def _tool_answers(
        self,
        requests: list[ToolRequest],
        profile: AgentProfile,
        deadline: float,
        turn: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """Run the well-formed calls of one turn; the tool messages for every request."""
        calls = {
            request.id: ToolCall(
                id=uuid.uuid4().hex,
                tool_name=request.name,
                arguments=request.arguments,
                agent_id=None if profile.id == LOCAL else profile.id,
                subagent=self.agent.name,
                parent_call_id=self.parent_call_id,
            )
            for request in requests
            if request.arguments is not None
        }
        ran = self.delegation.run(list(calls.values()), profile, deadline, self.ctx)
        results = dict(zip(calls, ran, strict=True))
        messages = []
        for request in requests:
            result = results.get(request.id)
            turn["tool_calls"].append(_traced(request, calls.get(request.id), result))
            answer = (
                {"status": "error", "error": request.problem} if result is None else _answer(result)
            )
            messages.append(
                {"role": "tool", "tool_call_id": request.id, "content": _capped(answer)}
            )
        return messages


def _left(deadline: float) -> float:
    """Seconds left before `deadline`.

    Raises:
        ToolTimeout: none.
    """
    left = deadline - time.monotonic()
    if left <= 0:
        raise ToolTimeout("the sub-agent ran out of time")
    return left


def _answer(result: ToolResult) -> dict[str, Any]:
    if result.ok:
        return {"status": "success", "output": result.output}
    return {"status": result.status.value, "error": result.error}


def _capped(answer: dict[str, Any]) -> str:
    text = json.dumps(answer, default=str, ensure_ascii=False)
    if len(text) <= MAX_TOOL_ANSWER_CHARS:
        return text
    cut = len(text) - MAX_TOOL_ANSWER_CHARS
    return text[:MAX_TOOL_ANSWER_CHARS] + f"… [{cut} more characters not shown]"


def _traced(
    request: ToolRequest, call: ToolCall | None, result: ToolResult | None
) -> dict[str, Any]:
    return {
        "id": request.id,
        "tool": request.name,
        "arguments": request.arguments,
        "call_id": None if call is None else call.id,
        "status": "error" if result is None else result.status.value,
        "error": request.problem if result is None else result.error,
    }
