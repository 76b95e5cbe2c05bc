"""A model's tool calls read from OpenAI (Chat Completions, Responses) and Anthropic
responses, and the replies that carry results back."""

from __future__ import annotations

from typing import Any

import pytest

from toolrun.interop.function_calls import (
    ModelToolCall,
    NotAModelResponse,
    ResponseKind,
    replies,
    result_text,
    tool_calls,
)
from toolrun.tools.model import ToolResult, ToolStatus

CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"file_path": "a.txt"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "grep", "arguments": '{"pattern": '},
                    },
                ],
            },
        }
    ],
}
RESPONSES = {
    "object": "response",
    "output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_x",
            "name": "glob",
            "arguments": '{"pattern": "*.md"}',
        },
    ],
}
ANTHROPIC = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "stop_reason": "tool_use",
    "content": [
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"file_path": "a.txt"}},
    ],
}


def test_chat_completions_calls_are_read_with_bad_arguments_flagged() -> None:
    kind, calls = tool_calls(CHAT)

    assert kind is ResponseKind.CHAT
    assert calls[0] == ModelToolCall("call_a", "read", {"file_path": "a.txt"})
    assert calls[1].problem is not None
    assert calls[1].problem.startswith("the arguments are not valid JSON")
    # The assistant message alone is read the same way.
    assert tool_calls(CHAT["choices"][0]["message"]) == (kind, calls)  # type: ignore[index]


def test_responses_and_anthropic_calls_are_read() -> None:
    assert tool_calls(RESPONSES) == (
        ResponseKind.RESPONSES,
        [ModelToolCall("call_x", "glob", {"pattern": "*.md"})],
    )
    assert tool_calls(ANTHROPIC) == (
        ResponseKind.ANTHROPIC,
        [ModelToolCall("toolu_1", "read", {"file_path": "a.txt"})],
    )


@pytest.mark.parametrize("arguments", [5, "null", "[1]", '"text"', "[" * 100_000])
def test_arguments_that_are_no_object_are_flagged_not_raised(arguments: Any) -> None:
    response = {"tool_calls": [{"id": "c", "function": {"name": "read", "arguments": arguments}}]}

    _, [call] = tool_calls(response)

    assert call.arguments == {}
    assert call.problem is not None


def test_an_answer_without_calls_has_none() -> None:
    answer = {"choices": [{"message": {"role": "assistant", "content": "Done."}}]}

    assert tool_calls(answer) == (ResponseKind.CHAT, [])
    assert replies(ResponseKind.ANTHROPIC, []) == []


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ([], "must be a JSON object"),
        ({"hello": 1}, "not an OpenAI Chat Completions"),
        ({"choices": []}, "choices[0].message is missing"),
        ({"tool_calls": [{"id": "x"}]}, "tool_calls[0] has no function name"),
        ({"content": [{"type": "tool_use", "input": {}}]}, "content[0] (tool_use) has no name"),
        ({"tool_calls": 5}, "tool_calls must be a list"),
        ({"choices": [{"message": {"tool_calls": "read"}}]}, "tool_calls must be a list"),
        ({"tool_calls": [5]}, "tool_calls[0] has no function name"),
        ({"tool_calls": [{"id": 7, "function": {"name": "read"}}]}, "tool_calls[0].id must be"),
        ({"choices": [{"message": 5}]}, "choices[0].message is missing"),
        ({"output": [{"type": "function_call", "name": 5}]}, "function_call 0 has no name"),
    ],
)
def test_other_shapes_are_refused_precisely(response: Any, message: str) -> None:
    with pytest.raises(NotAModelResponse) as caught:
        tool_calls(response)

    assert message in str(caught.value)


def result(status: ToolStatus, output: Any = None, error: str | None = None) -> ToolResult:
    return ToolResult(call_id="c1", tool_name="read", status=status, output=output, error=error)


def test_results_become_text_for_the_model() -> None:
    assert result_text(result(ToolStatus.SUCCESS, {"lines": 3})) == ('{"lines": 3}', False)
    assert result_text(result(ToolStatus.SUCCESS, "plain")) == ("plain", False)
    assert result_text(result(ToolStatus.ERROR, error="no such file")) == (
        "error: no such file",
        True,
    )
    assert result_text(result(ToolStatus.AWAITING_APPROVAL))[0] == (
        "call c1 is waiting for a human's approval"
    )


def test_replies_in_each_shape() -> None:
    call = ModelToolCall("id1", "read", {})

    assert replies(ResponseKind.CHAT, [(call, "ok", False)]) == [
        {"role": "tool", "tool_call_id": "id1", "content": "ok"}
    ]
    assert replies(ResponseKind.RESPONSES, [(call, "ok", False)]) == [
        {"type": "function_call_output", "call_id": "id1", "output": "ok"}
    ]
    assert replies(ResponseKind.ANTHROPIC, [(call, "bad", True)]) == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "id1", "content": "bad", "is_error": True}
            ],
        }
    ]
