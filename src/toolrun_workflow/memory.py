"""Memory across iterations: insights, learnings and issues saved with their iteration and
stage, and found again by ranked text search (BM25 over stemmed words) filtered by stage,
iteration or kind."""

from __future__ import annotations

import math
import time
import uuid
from collections import Counter
from typing import Any

from sqlmodel import Session, select

from toolrun.permissions.levels import PermissionLevel
from toolrun.selection.text import terms
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun_workflow.base import descriptor
from toolrun_workflow.iterations import STAGES, MemoryRecord, current_iteration, store_for

KINDS = ("insight", "learning", "issue")
K1, B = 1.2, 0.75


def ranked(query: str, entries: list[MemoryRecord], limit: int) -> list[tuple[float, MemoryRecord]]:
    """`entries` that share a word with `query`, best first (BM25)."""
    wanted = set(terms(query))
    documents = [Counter(terms(entry.text)) for entry in entries]
    if not wanted or not documents:
        return []
    average = sum(sum(d.values()) for d in documents) / len(documents) or 1.0
    frequency = Counter(term for d in documents for term in set(d))
    scored = []
    for entry, words in zip(entries, documents, strict=True):
        length = sum(words.values())
        score = 0.0
        for term in wanted & set(words):
            idf = math.log(1 + (len(documents) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = words[term]
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
        if score > 0:
            scored.append((score, entry))
    scored.sort(key=lambda item: -item[0])
    return scored[:limit]


class SaveMemory(Tool):
    def __init__(self, kind: str, examples: list[str]) -> None:
        self.kind = kind
        self.descriptor = descriptor(
            f"save_{kind}",
            f"Save an {kind} to the shared memory, with the current iteration and stage; "
            "query_memory finds it again, in later iterations too."
            if kind[0] in "aeiou"
            else f"Save a {kind} to the shared memory, with the current iteration and "
            "stage; query_memory finds it again, in later iterations too.",
            {"text": {"type": "string", "minLength": 1, "maxLength": 20_000}},
            [(example, {"text": example}) for example in examples],
            required=("text",),
            group="memory",
            permission=PermissionLevel.READ_WRITE,
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, _ = current_iteration(ctx)
        record = MemoryRecord(
            id=f"mem-{uuid.uuid4().hex[:10]}",
            kind=self.kind,
            text=arguments["text"],
            iteration_id=iteration.id,
            stage=iteration.stage,
            created_at=time.time(),
        )
        with Session(store_for(ctx).engine) as session:
            session.add(record)
            session.commit()
            return ToolOutput(record.model_dump())


class QueryMemory(Tool):
    descriptor = descriptor(
        "query_memory",
        "Search the saved insights, learnings and issues: ranked by how well their text "
        "matches the query, optionally only of one stage, iteration or kind.",
        {
            "query": {"type": "string", "minLength": 1, "maxLength": 2000},
            "stage": {"enum": list(STAGES)},
            "iteration": {"type": "string", "minLength": 1},
            "kind": {"enum": list(KINDS)},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
        },
        [
            ("What we learnt about CSV", {"query": "csv export encoding"}),
            ("Issues met while coding", {"query": "timeout", "stage": "coding", "kind": "issue"}),
            ("This iteration's insights", {"query": "users", "iteration": "a1b2c3d4e5f6"}),
        ],
        required=("query",),
        group="memory",
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        query = select(MemoryRecord)
        if "stage" in arguments:
            query = query.where(MemoryRecord.stage == arguments["stage"])
        if "iteration" in arguments:
            query = query.where(MemoryRecord.iteration_id == arguments["iteration"])
        if "kind" in arguments:
            query = query.where(MemoryRecord.kind == arguments["kind"])
        with Session(store_for(ctx).engine) as session:
            entries = list(session.exec(query))
        found = ranked(arguments["query"], entries, arguments.get("limit", 10))
        return ToolOutput(
            {
                "results": [
                    {**entry.model_dump(), "score": round(score, 4)} for score, entry in found
                ]
            }
        )


def memory_tools() -> list[Tool]:
    return [
        QueryMemory(),
        SaveMemory(
            "insight",
            [
                "Users mostly export under 1,000 rows",
                "The PRD was too vague on errors",
                "Streaming beats buffering here",
            ],
        ),
        SaveMemory(
            "learning",
            [
                "Pin the CSV dialect in tests",
                "Write the failing test first",
                "Small tasks merge faster",
            ],
        ),
        SaveMemory(
            "issue",
            [
                "Excel misreads UTF-8 without a BOM",
                "The lint step is slow",
                "Flaky test in the exporter",
            ],
        ),
    ]
