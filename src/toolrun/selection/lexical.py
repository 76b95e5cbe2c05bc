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
    """Weighted term frequencies of each card, and postings, for BM25 scores."""

    cards: Sequence[ToolCard]

    def __post_init__(self) -> None:
        self.weights: list[dict[str, float]] = []
        self.postings: dict[str, list[int]] = defaultdict(list)
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
            self.weights.append(dict(weighted))
            self.words.append(set(weighted))
            self.name_words.append({t for t in terms(card.name) if t not in GENERIC})
            self.tag_words.append({t for tag in card.tags for t in terms(tag)})
            self.description_words.append({t for t in fields["description"] if not t.isdigit()})
            for term in weighted:
                self.postings[term].append(index)
        self.position = {card.name: index for index, card in enumerate(self.cards)}
        self.lengths = [sum(w.values()) for w in self.weights]
        self.average = sum(self.lengths) / len(self.lengths) if self.lengths else 1.0
        count = len(self.cards)
        self.idf = {
            term: math.log(1 + (count - len(docs) + 0.5) / (len(docs) + 0.5))
            for term, docs in self.postings.items()
        }
        # Each term's share of the BM25 score of each card holding it, worked out once.
        self.shares: dict[str, list[tuple[int, float]]] = {
            term: [(index, self._share(term, index)) for index in docs]
            for term, docs in self.postings.items()
        }

    def _share(self, term: str, index: int) -> float:
        tf = self.weights[index][term]
        norm = K1 * (1 - B + B * self.lengths[index] / self.average)
        return self.idf[term] * tf * (K1 + 1) / (tf + norm)

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
