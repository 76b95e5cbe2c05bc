"""BM25 over the fields of tool cards, each field weighted (a tool's name says more about
it than a parameter's description)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from toolrun.selection.cards import ToolCard
from toolrun.selection.text import terms, words

K1 = 1.2
B = 0.75
# Name words that say little about what a tool does.
GENERIC = words(
    "get calcul find comput retriev search check list info detail data valu set updat "
    "creat fetch api tool"
)
FIELD_WEIGHTS = {"name": 3.0, "description": 1.0, "parameters": 0.7, "details": 0.3}


def card_fields(card: ToolCard) -> dict[str, list[str]]:
    """The words of each field of a card."""
    parameters = " ".join(card.properties)
    details = [
        str(spec.get("description", "")) for spec in card.properties.values() if spec
    ] + list(card.examples)
    return {
        "name": terms(card.name)
        + terms(card.category or "")
        + [t for g in card.tags for t in terms(g)],
        "description": terms(card.description),
        "parameters": terms(parameters),
        "details": terms(" ".join(details)),
    }


@dataclass
class LexicalIndex:
    """Each term's BM25 share of each card holding it, and each card's words (for
    `relevance`)."""

    cards: Sequence[ToolCard]

    def __post_init__(self) -> None:
        weights: list[dict[str, float]] = []  # each card's weighted term frequencies
        postings: dict[str, list[int]] = defaultdict(list)
        self.words: list[set[str]] = []  # every term of the card
        self.name_words: list[set[str]] = []  # the telling terms of its name
        self.description_words: list[set[str]] = []
        self.tag_words: list[set[str]] = []  # its tags' and category's terms
        for index, card in enumerate(self.cards):
            weighted: defaultdict[str, float] = defaultdict(float)
            fields = card_fields(card)
            for name, found in fields.items():
                for term in found:
                    weighted[term] += FIELD_WEIGHTS[name]
            weights.append(dict(weighted))
            self.words.append(set(weighted))
            self.name_words.append({t for t in terms(card.name) if t not in GENERIC})
            self.tag_words.append({t for tag in card.tags for t in terms(tag)})
            self.description_words.append({t for t in fields["description"] if not t.isdigit()})
            for term in weighted:
                postings[term].append(index)
        self.position = {card.name: index for index, card in enumerate(self.cards)}
        lengths = [sum(w.values()) for w in weights]
        average = sum(lengths) / len(lengths) if lengths else 1.0
        count = len(self.cards)
        # Worked out once here, so that a task's scores are sums.
        self.shares: dict[str, list[tuple[int, float]]] = {}
        for term, docs in postings.items():
            idf = math.log(1 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
            self.shares[term] = [
                (index, _share(idf, weights[index][term], lengths[index], average))
                for index in docs
            ]

    def relevance(self, index: int, query: set[str]) -> float:
        """How well card `index` and a task's terms (numbers left out) cover each other:
        the share of the task's terms the card has, plus the share of the card's telling
        name terms and (half) of its description terms the task has."""
        if not query:
            return 0.0
        name, described = self.name_words[index], self.description_words[index]
        return (
            len(query & self.words[index]) / len(query)
            + (len(name & query) / len(name) if name else 0.0)
            + 0.5 * (len(described & query) / len(described) if described else 0.0)
        )

    def scores(self, query: list[str]) -> dict[int, float]:
        """BM25 score of every card that holds a query term, by card index (terms taken in
        their order in the query, so that sums and ties come out the same every run)."""
        found: dict[int, float] = defaultdict(float)
        for term in dict.fromkeys(query):
            for index, share in self.shares.get(term, ()):
                found[index] += share
        return found


def _share(idf: float, tf: float, length: float, average: float) -> float:
    """A term's BM25 share of a card's score: its `idf`, its weighted frequency `tf` in
    the card, the card's `length` against the `average`."""
    norm = K1 * (1 - B + B * length / average)
    return idf * tf * (K1 + 1) / (tf + norm)
