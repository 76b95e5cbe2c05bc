"""How near in meaning a task is to each tool (step 3 with an embedding model): a tool's
nearness is its best text's cosine with the task, or, where the tool has requests made
of it (`requests`), its best request's by their gists (what they ask, values aside:
`facts.gist`) where that is more. The tools' texts are embedded once per selector
(`Embedded`), a task's nearness to each tool once per select (`Nearness`)."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolrun.selection.facts import gist

if TYPE_CHECKING:
    from collections.abc import Iterable

    from toolrun.selection.cards import ToolCard
    from toolrun.selection.minilm import Encoder, Matrix


class Embedded:
    """Each card's texts, and its requests' gists, embedded by `encoder` when first
    needed, once."""

    def __init__(self, cards: Sequence[ToolCard], encoder: Encoder) -> None:
        self.cards = cards
        self.encoder = encoder
        self.requested = tuple(i for i, card in enumerate(cards) if card.requests)
        self._texts: dict[int, Matrix] = {}
        self._gists: dict[int, Matrix] = {}

    def texts(self, index: int) -> Matrix:
        found = self._texts.get(index)
        if found is None:
            found = self._texts[index] = self.encoder.encode(self.cards[index].texts)
        return found

    def gists(self, index: int) -> Matrix:
        found = self._gists.get(index)
        if found is None:
            requests = self.cards[index].requests
            found = self._gists[index] = self.encoder.encode([gist(text) for text in requests])
        return found


class Nearness:
    """A task's nearness in meaning to each of `embedded`'s cards, each worked out once;
    the task (and, where a card has requests, its gist) embedded when first needed."""

    def __init__(self, embedded: Embedded, task: str) -> None:
        self.embedded = embedded
        self.task = task
        self._vectors: tuple[Matrix, Matrix] | None = None
        self._found: dict[int, float] = {}

    @property
    def task_vector(self) -> Matrix:
        return self._task_vectors()[0]

    @property
    def gist_vector(self) -> Matrix:
        """The task's gist embedded (`facts.gist`; the task's own vector where no card
        has requests)."""
        return self._task_vectors()[1]

    def of(self, index: int) -> float:
        """Card `index`'s nearness to the task."""
        found = self._found.get(index)
        if found is None:
            task_vector, gist_vector = self._task_vectors()
            embedded = self.embedded
            found = float((embedded.texts(index) @ task_vector).max())
            if embedded.cards[index].requests:
                found = max(found, float((embedded.gists(index) @ gist_vector).max()))
            self._found[index] = found
        return found

    def nearest(self, indexes: Iterable[int], count: int) -> list[int]:
        """The `count` of `indexes` nearest the task, the nearest first."""
        return heapq.nlargest(count, indexes, key=self.of)

    def _task_vectors(self) -> tuple[Matrix, Matrix]:
        """The task embedded, and its gist (the task itself where it is, or where no card
        has requests to meet it): in one batch."""
        if self._vectors is None:
            task = self.task
            task_gist = gist(task) if self.embedded.requested else task
            texts = [task] if task_gist == task else [task, task_gist]
            vectors = self.embedded.encoder.encode(texts)
            self._vectors = vectors[0], vectors[-1]
        return self._vectors
