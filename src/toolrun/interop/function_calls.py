"""A model's tool calls, from an OpenAI or Anthropic response (plain dicts), and the
messages that carry their results back to the model.

Recognised: OpenAI Chat Completions (a response with `choices`, or its assistant message
with `tool_calls`), OpenAI Responses (`output` items of type `function_call`), and
Anthropic Messages (`content` blocks of type `tool_use`). Tool names are the API-safe
ones of `formats.api_name`; `resolve` maps them back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from toolrun.tools.model import ToolResult, ToolStatus


class ResponseKind(StrEnum):
    CHAT = "openai_chat"
    RESPONSES = "openai_responses"
    ANTHROPIC = "anthropic"


class NotAModelResponse(ValueError):
    """The object is none of the recognised response shapes."""


@dataclass(frozen=True)
class ModelToolCall:
    """One call a model asked for; `problem` says why it cannot run (bad arguments)."""

    id: str
    name: str
    arguments: dict[str, Any]
    problem: str | None = None


def tool_calls(response: object) -> tuple[ResponseKind, list[ModelToolCall]]:
    """The kind of response and the tool calls in it (none: the model answered).

    Raises:
        NotAModelResponse: not a recognised response shape.
    """
    if not isinstance(response, dict):
        raise NotAModelResponse("a model response must be a JSON object")
    if isinstance(response.get("choices"), list):
        choices = response["choices"]
        message = choices[0].get("message") if choices and isinstance(choices[0], dict) else None
        if not isinstance(message, dict):
            raise NotAModelResponse("choices[0].message is missing")
        return ResponseKind.CHAT, _chat_calls(message)
    if "tool_calls" in response or response.get("role") == "assistant":
        if isinstance(response.get("content"), list):  # Anthropic's assistant message
            return ResponseKind.ANTHROPIC, _anthropic_calls(response["content"])
        return ResponseKind.CHAT, _chat_calls(response)
    if isinstance(response.get("output"), list):
        return ResponseKind.RESPONSES, _responses_calls(response["output"])
    if isinstance(response.get("content"), list):
        return ResponseKind.ANTHROPIC, _anthropic_calls(response["content"])
    raise NotAModelResponse(
        "not an OpenAI Chat Completions, OpenAI Responses or Anthropic Messages response "
        "(expected 'choices', 'tool_calls', 'output' or 'content')"
    )


def _chat_calls(message: dict[str, Any]) -> list[ModelToolCall]:
    listed = message.get("tool_calls") or []
    if not isinstance(listed, list):
        raise NotAModelResponse("tool_calls must be a list")
    found = []
    for index, call in enumerate(listed):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise NotAModelResponse(f"tool_calls[{index}] has no function name")
        call_id = call.get("id", str(index))
        if not isinstance(call_id, str):
            raise NotAModelResponse(f"tool_calls[{index}].id must be a string")
        found.append(_decoded(call_id, function["name"], function))
    return found


def _responses_calls(output: list[Any]) -> list[ModelToolCall]:
    items = [i for i in output if isinstance(i, dict) and i.get("type") == "function_call"]
    for index, item in enumerate(items):
        if not isinstance(item.get("name"), str) or not isinstance(item.get("call_id"), str):
            raise NotAModelResponse(f"function_call {index} has no name or call_id")
    return [_decoded(item["call_id"], item["name"], item) for item in items]


def _decoded(call_id: str, name: str, holder: dict[str, Any]) -> ModelToolCall:
    """A call whose arguments are a JSON text (OpenAI), decoded."""
    text = holder.get("arguments") or "{}"
    try:
        arguments = json.loads(text) if isinstance(text, str) else text
    except (ValueError, RecursionError) as exc:
        return ModelToolCall(call_id, name, {}, f"the arguments are not valid JSON: {exc}")
    if not isinstance(arguments, dict):
        return ModelToolCall(call_id, name, {}, "the arguments must be a JSON object")
    return ModelToolCall(call_id, name, arguments)


def _anthropic_calls(content: list[Any]) -> list[ModelToolCall]:
    found = []
    for index, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        if not isinstance(block.get("name"), str) or not isinstance(block.get("id"), str):
            raise NotAModelResponse(f"content[{index}] (tool_use) has no name or id")
        arguments = block.get("input", {})
        if not isinstance(arguments, dict):
            found.append(ModelToolCall(block["id"], block["name"], {}, "input must be an object"))
        else:
            found.append(ModelToolCall(block["id"], block["name"], arguments))
    return found


def result_text(result: ToolResult) -> tuple[str, bool]:
    """What the model is told of a call's result, and whether it is an error."""
    if result.status is ToolStatus.SUCCESS:
        output = result.output
        return (output if isinstance(output, str) else json.dumps(output)), False
    if result.status is ToolStatus.AWAITING_APPROVAL:
        return f"call {result.call_id} is waiting for a human's approval", True
    if not result.final:
        return f"call {result.call_id} is still {result.status}; it did not end in time", True
    return f"{result.status}: {result.error or 'no detail'}", True


def replies(kind: ResponseKind, answered: list[tuple[ModelToolCall, str, bool]]) -> list[Any]:
    """The messages (or input items) that carry the results back, for `kind`: one tool
    message per call (Chat), one function_call_output item per call (Responses), or one
    user message of tool_result blocks (Anthropic; none when there were no calls)."""
    if kind is ResponseKind.CHAT:
        return [
            {"role": "tool", "tool_call_id": call.id, "content": text} for call, text, _ in answered
        ]
    if kind is ResponseKind.RESPONSES:
        return [
            {"type": "function_call_output", "call_id": call.id, "output": text}
            for call, text, _ in answered
        ]
    if not answered:
        return []
    blocks = [
        {"type": "tool_result", "tool_use_id": call.id, "content": text, "is_error": error}
        for call, text, error in answered
    ]
    return [{"role": "user", "content": blocks}]
