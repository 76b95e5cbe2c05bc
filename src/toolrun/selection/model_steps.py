"""Steps 2 and 5 by an OpenAI-compatible model, where one is configured: the intents of a
task, and the arguments of the chosen tool (a function call the model is made to make).
Any failure of the model falls back to the rules, and the trace says so."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from toolrun.config import Settings
from toolrun.errors import ToolExecutionError
from toolrun.selection.cards import ToolCard
from toolrun.selection.steps import INTENTS
from toolrun.subagents.chat import ChatModel

TIMEOUT_S = 30.0
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_INTENTS_PROMPT = (
    "Classify what the user's task asks to have done. Answer with a JSON object "
    '{{"intents": [...]}} listing, in the order the task asks for them, only values from: '
    "{choices}."
)
_ARGUMENTS_PROMPT = (
    "Call the function with the arguments the user's task gives. Use only values stated "
    "in the task or the context; leave out optional parameters the task does not give."
)


@dataclass
class ModelSteps:
    """The model's version of steps 2 and 5."""

    chat: ChatModel
    timeout_s: float = TIMEOUT_S

    @classmethod
    def configured(cls, settings: Settings) -> ModelSteps | None:
        """The configured model's steps (TOOLRUN_MODEL_BASE_URL and TOOLRUN_MODEL), or None."""
        if settings.model_base_url is None or settings.model is None:
            return None
        return cls(ChatModel.from_settings(settings, None))

    def intents(self, task: str) -> list[str]:
        """The task's intents, among the known ones.

        Raises:
            ToolExecutionError: the model failed or did not answer with that JSON.
        """
        prompt = _INTENTS_PROMPT.format(choices=", ".join(INTENTS))
        messages = [{"role": "system", "content": prompt}, {"role": "user", "content": task}]
        reply = self.chat.reply(messages, [], timeout_s=self.timeout_s)
        try:
            found = json.loads(_json_part(reply.content or ""))["intents"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ToolExecutionError(
                f"the model's intents are not the JSON asked for: {exc}"
            ) from exc
        if not isinstance(found, list):
            raise ToolExecutionError("the model's intents are not a list")
        return [intent for intent in dict.fromkeys(map(str, found)) if intent in INTENTS]

    def arguments(self, card: ToolCard, task: str, context: dict[str, Any]) -> dict[str, Any]:
        """The arguments the model calls `card` with.

        Raises:
            ToolExecutionError: the model failed or did not call the function.
        """
        name = _UNSAFE.sub("_", card.name)[:64]
        spec = {
            "type": "function",
            "function": {
                "name": name,
                "description": card.description,
                "parameters": card.parameters,
            },
        }
        content = task if not context else f"{task}\n\nContext: {json.dumps(context)}"
        messages = [
            {"role": "system", "content": _ARGUMENTS_PROMPT},
            {"role": "user", "content": content},
        ]
        choice = {"type": "function", "function": {"name": name}}
        reply = self.chat.reply(messages, [spec], timeout_s=self.timeout_s, tool_choice=choice)
        calls = [call for call in reply.tool_calls if call.name == name]
        if not calls or calls[0].arguments is None:
            raise ToolExecutionError(f"the model did not call {name} with JSON arguments")
        return calls[0].arguments


def _json_part(text: str) -> str:
    """The JSON object in a reply that may wrap it in prose or a code fence."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if start >= 0 and end > start else text
