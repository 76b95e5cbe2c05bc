"""Requests people made of toolrun that none of its built-in tools serves (the task
files' `"tool": null` ones, kept in requests.json): a haiku, a Slack message, a train's
arithmetic, what `git rebase` means. A task as near in meaning to one of them as to any
built-in tool (within MARGIN; a tool's nearness counts its requests' gists too, so "commit
with the message 'write a haiku about autumn'" stays a commit) asks for no built-in
tool, whatever words it shares with them. Prose a task hands over is no request of its
own: "write 'what is the capital of Australia?' to quiz.txt" is weighed by its gist
(`facts.gist`, without the quote). It says nothing of other tools — a plugin's
weather tool may still answer "what's the weather in Paris" — so it only ever turns a
built-in tool down."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolrun.selection.requests import unserved_requests

if TYPE_CHECKING:
    from collections.abc import Sequence

    from toolrun.selection.minilm import Encoder, Matrix

# What "no suitable tool" says of a task turned down so (`Unserved.reason`).
UNSERVED = "no suitable tool: the task is like a request no built-in tool serves"
# How much less like such a request than like a built-in tool a task may be and still
# ask for none (cosines; measured with each registry task file left out in turn,
# docs/selection.md, "Requests no built-in tool serves").
MARGIN = 0.05


@dataclass(frozen=True)
class Unserved:
    """Why a task asks for no built-in tool: the request no built-in tool serves that it
    is most like, and the two similarities that decided."""

    request: str
    similarity: float
    tools_similarity: float

    def reason(self) -> str:
        return (
            f"{UNSERVED} ({self.request!r}, similarity {self.similarity:.2f}; the nearest built-in "
            f"tool {self.tools_similarity:.2f})"
        )


def unserved(
    encoder: Encoder,
    task_vector: Matrix,
    tools_similarity: float,
    requests: Sequence[str] | None = None,
) -> Unserved | None:
    """What says a task asks for none of the built-in tools: the request no built-in tool
    serves (`requests`, by default the shipped ones) nearest the task (`task_vector`,
    embedded), where it is at least `tools_similarity` (the task's with the nearest
    built-in tool) less MARGIN; else None."""
    requests = unserved_requests() if requests is None else requests
    if not requests:
        return None
    similarities = _embedded(encoder, tuple(requests)) @ task_vector
    nearest = int(similarities.argmax())
    if float(similarities[nearest]) < tools_similarity - MARGIN:
        return None
    return Unserved(requests[nearest], float(similarities[nearest]), tools_similarity)


@functools.lru_cache(maxsize=4)
def _embedded(encoder: Encoder, requests: tuple[str, ...]) -> Matrix:
    """`requests` embedded by `encoder`, stacked once (not on every select)."""
    return encoder.encode(requests)
