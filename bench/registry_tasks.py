"""Tasks written for toolrun's built-in tools (bench/data/toolrun_tasks*.jsonl: each a
`task` and its right built-in `tool`, null where none fits) and the selectors they are
measured with: the judge's own file, the files kept never seen, and the request files
(the ones requests.json was written from, `bench/selection_requests.py`), each of which
can be measured by a selector whose requests leave it out."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from bench.bfcl_data import json_lines
from toolrun.selection.cards import ToolCard
from toolrun.selection.pipeline import Selector
from toolrun.selection.requests import shipped_sources
from toolrun.tools import ToolRegistry

if TYPE_CHECKING:
    from collections.abc import Collection

    from toolrun.selection.minilm import Encoder

TASKS = Path(__file__).parent / "data"
# The judge's own registry tasks (fitted on: no request comes from them).
REGISTRY_TASKS = TASKS / "toolrun_tasks.jsonl"
# Task files no request comes from and no judge is fitted on, so that selection can be
# measured on requests it has never seen (written blind: from the built-in tools' names,
# descriptions and parameters alone).
NEVER_SEEN = frozenset(
    (TASKS / f"toolrun_tasks_{name}.jsonl").resolve()
    for name in ("blind4", "blind6", "blind10", "blind12", "blind14")
)


def read_requests(
    files: list[Path], unseen: Collection[str] = ()
) -> tuple[dict[str, list[str]], list[str]]:
    """The tasks of `files`: those with a right built-in tool (`tool`) by its id, and
    those no built-in tool serves (`"tool": null`), each once, in file order; none that
    the judge's own task file or a NEVER_SEEN file holds too (word for word), nor one of
    `unseen`, so that those stay unseen.

    Raises:
        ValueError: a task names a tool that is not built in, has no `tool` key, or is
            given two answers (a tool and another, or none).
        KeyError: a task without its `task`.
    """
    ids = {
        tool.descriptor.name: tool.descriptor.tool_id
        for tool in ToolRegistry.with_builtins().list()
    }
    kept_unseen = {
        record["task"] for path in [REGISTRY_TASKS, *NEVER_SEEN] for record in json_lines(path)
    } | set(unseen)
    by_tool: dict[str, list[str]] = {}
    unserved: list[str] = []
    named: dict[str, str | None] = {}
    for path in files:
        for record in json_lines(path):
            task = record["task"]
            if "tool" not in record:
                raise ValueError(f"{path}: {task!r} says no `tool` (null where none fits)")
            name = record["tool"]
            if name is not None and name not in ids:
                raise ValueError(f"{path}: {name!r} is not a built-in tool")
            if named.setdefault(task, name) != name:
                raise ValueError(f"{path}: {task!r} is given {named[task]!r} and {name!r}")
            if task in kept_unseen:
                continue
            pool = unserved if name is None else by_tool.setdefault(ids[name], [])
            if task not in pool:
                pool.append(task)
    return dict(sorted(by_tool.items())), unserved


def request_sources() -> list[Path]:
    """The task files the shipped requests were written from."""
    return [TASKS / name for name in shipped_sources()]


def builtin_selector(encoder: Encoder | None) -> Selector:
    """A selector over toolrun's built-in tools, as the API's over the registry."""
    cards = [ToolCard.of(tool.descriptor) for tool in ToolRegistry.with_builtins().list()]
    return Selector(cards, encoder)


def selector_without(left_out: Path, encoder: Encoder | None) -> Selector:
    """A selector over the built-in tools whose requests (both kinds) come from every
    request file but `left_out`, none of its tasks (another file may hold one word for
    word): it selects for `left_out`'s tasks as for tasks never seen."""
    sources = [path for path in request_sources() if path.resolve() != left_out.resolve()]
    own = {record["task"] for record in json_lines(left_out)}
    by_tool, unserved = read_requests(sources, unseen=own)
    cards = [
        dataclasses.replace(
            ToolCard.of(tool.descriptor),
            requests=tuple(by_tool.get(tool.descriptor.tool_id, ())),
        )
        for tool in ToolRegistry.with_builtins().list()
    ]
    return Selector(cards, encoder, unserved_requests=unserved)
