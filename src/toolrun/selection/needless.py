"""Requests people made of toolrun that none of its built-in tools could do (the task
files' `"tool": null` ones, kept in requests.json): a haiku, a Slack message, a train's
arithmetic, what `git rebase` means. A task as near in meaning to one of them as to any
built-in tool's texts (within MARGIN) asks for no built-in tool, whatever words it
shares with them. It says nothing of other tools — a plugin's weather tool may still
answer "what's the weather in Paris" — so it only ever turns a built-in tool down."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolrun.selection.requests import needless_requests

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolrun.selection.minilm import Encoder, Matrix

# How much less like such a request than like a built-in tool a task may be and still
# ask for none (cosines; measured on the registry task files, docs/selection.md).
MARGIN = 0.05


@dataclass(frozen=True)
class Needless:
    """Why a task asks for no built-in tool: the request needing none it is most like,
    and the two similarities that decided."""

    request: str
    similarity: float
    tools_similarity: float

    def reason(self) -> str:
        return (
            f"no suitable tool: the task is like a request no built-in tool could do "
            f"({self.request!r}, similarity {self.similarity:.2f}; the nearest built-in "
            f"tool's text {self.tools_similarity:.2f})"
        )


def needless(
    encoder: Encoder,
    task: str,
    tool_vectors: Sequence[Matrix],
    requests: Sequence[str] | None = None,
) -> Needless | None:
    """What says `task` asks for none of the built-in tools whose texts are embedded in
    `tool_vectors`, or None where nothing does (`requests`: those needing no tool, by
    default the shipped ones)."""
    requests = needless_requests() if requests is None else requests
    if not requests or not tool_vectors:
        return None
    task_vector = encoder.encode([task])[0]
    similarities = encoder.encode(list(requests)) @ task_vector
    nearest = int(similarities.argmax())
    tools = max(float((vectors @ task_vector).max()) for vectors in tool_vectors)
    if float(similarities[nearest]) < tools - MARGIN:
        return None
    return Needless(requests[nearest], float(similarities[nearest]), tools)
