"""A client of an OpenAI-compatible Chat Completions endpoint (OpenAI, vLLM, Ollama,
llama.cpp server): one request per model turn, tools in the function-calling format."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from toolrun.config import Settings
from toolrun.errors import ToolExecutionError
from toolrun.tools.model import ToolDescriptor

MAX_ERROR_CHARS = 500


class ModelError(ToolExecutionError):
    """The model endpoint failed, or answered something that is not a chat completion."""


@dataclass(frozen=True)
class ToolRequest:
    """One tool call the model asked for; `arguments` is None when its JSON is bad."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    problem: str | None = None


@dataclass(frozen=True)
class Reply:
    """One model turn: the assistant message (to send back as is), its text and tool
    calls, and the tokens it took."""

    message: dict[str, Any]
    content: str | None
    tool_calls: list[ToolRequest]
    usage: dict[str, int] = field(default_factory=dict)


def function_spec(descriptor: ToolDescriptor) -> dict[str, Any]:
    """A tool in the Chat Completions ``tools`` format."""
    return {
        "type": "function",
        "function": {
            "name": descriptor.name,
            "description": descriptor.description,
            "parameters": descriptor.api_parameters(),
        },
    }


class ChatModel:
    """Chat Completions requests to one endpoint and model."""

    def __init__(
        self, base_url: str, model: str, *, api_key: str | None = None, timeout_s: float = 120.0
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.timeout_s = timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(headers=headers, trust_env=False)

    @classmethod
    def from_settings(cls, settings: Settings, model: str | None) -> ChatModel:
        """The endpoint in TOOLRUN_MODEL_BASE_URL, with `model` or TOOLRUN_MODEL.

        Raises:
            ModelError: no endpoint or model is configured.
        """
        chosen = model or settings.model
        if settings.model_base_url is None or chosen is None:
            raise ModelError(
                "no model is configured for sub-agents: set TOOLRUN_MODEL_BASE_URL and "
                "TOOLRUN_MODEL (and TOOLRUN_MODEL_API_KEY if the endpoint needs one)"
            )
        key = settings.model_api_key
        return cls(
            settings.model_base_url,
            chosen,
            api_key=None if key is None else key.get_secret_value(),
            timeout_s=settings.model_timeout_s,
        )

    def close(self) -> None:
        self._http.close()

    def reply(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        timeout_s: float,
        tool_choice: dict[str, Any] | None = None,
    ) -> Reply:
        """The model's next turn; `tool_choice` forces a call of one of `tools`.

        Raises:
            ModelError: unreachable, an error status, or not a chat completion.
        """
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        wait = max(0.1, min(timeout_s, self.timeout_s))
        try:
            response = self._http.post(self.url, json=body, timeout=wait)
        except httpx.TimeoutException as exc:
            raise ModelError(f"the model at {self.url} did not answer within {wait:.0f} s") from exc
        except httpx.HTTPError as exc:
            raise ModelError(f"the model at {self.url} is unreachable: {exc}") from exc
        if response.status_code != 200:
            raise ModelError(
                f"the model at {self.url} answered {response.status_code}: "
                f"{response.text[:MAX_ERROR_CHARS]}"
            )
        try:
            return _parse(response.json())
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise ModelError(
                f"the model at {self.url} did not answer with a chat completion ({exc}): "
                f"{response.text[:MAX_ERROR_CHARS]}"
            ) from exc


def _parse(completion: dict[str, Any]) -> Reply:
    message = completion["choices"][0]["message"]
    if not isinstance(message, dict):
        raise TypeError("choices[0].message is not an object")
    calls = [_tool_request(raw) for raw in message.get("tool_calls") or []]
    usage = {
        name: int(value)
        for name, value in (completion.get("usage") or {}).items()
        if name in ("prompt_tokens", "completion_tokens", "total_tokens") and value is not None
    }
    sent_back: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        sent_back["tool_calls"] = message["tool_calls"]
    return Reply(sent_back, message.get("content"), calls, usage)


def _tool_request(raw: dict[str, Any]) -> ToolRequest:
    function = raw["function"]
    name, text = str(function["name"]), function.get("arguments") or "{}"
    call_id = str(raw.get("id") or name)
    try:
        arguments = json.loads(text) if isinstance(text, str) else text
    except ValueError as exc:
        return ToolRequest(call_id, name, None, f"the arguments are not valid JSON: {exc}")
    if not isinstance(arguments, dict):
        return ToolRequest(call_id, name, None, "the arguments must be a JSON object")
    return ToolRequest(call_id, name, arguments)
