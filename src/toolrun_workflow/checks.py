"""Validation tools over the iteration's records, each a structured pass/fail report:
feature coverage, task dependencies, data format. Records are checked against their
schemas first: a hand-edited record that does not fit is reported (`malformed`), never
a crash, and left out of the rest of the check."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun_workflow.base import descriptor, ids, read_records
from toolrun_workflow.files import Folder
from toolrun_workflow.iterations import current_iteration
from toolrun_workflow.records import COMPONENT, FEATURE, KINDS, REQUIREMENT, TASK, Kind, problems


@dataclass
class Loaded:
    """The well-formed records of some kinds, and what is wrong with the others."""

    records: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    problems: list[dict[str, Any]] = field(default_factory=list)
    checked: int = 0


def load(folder: Folder, kinds: tuple[Kind, ...]) -> Loaded:
    """Read the record files of `kinds`, keeping only records that meet their schema."""
    loaded = Loaded()
    for kind in kinds:
        where = kind.relative
        try:
            records = read_records(folder, kind.relative)
        except ToolExecutionError as exc:
            loaded.problems.append({"file": where, "record": None, "error": str(exc)})
            records = []
        good = []
        for record in records:
            loaded.checked += 1
            found = problems(kind, record)
            loaded.problems += [
                {"file": where, "record": record.get("id"), "error": error} for error in found
            ]
            if not found:
                good.append(record)
        loaded.records[kind.name] = good
    return loaded


def dangling(
    loaded: Loaded, skip: frozenset[tuple[str, str]] = frozenset()
) -> list[dict[str, Any]]:
    """References of well-formed records to ids no record of the named kind has (a
    reference into a malformed record counts as dangling)."""
    found = []
    for kind in KINDS.values():
        for name, other in kind.references.items():
            if (kind.name, name) in skip or kind.name not in loaded.records:
                continue
            known = ids(loaded.records.get(other, []))
            for record in loaded.records[kind.name]:
                missing = [i for i in record[name] if i not in known]
                if missing:
                    found.append(
                        {"kind": kind.name, "id": record["id"], "field": name, "missing": missing}
                    )
    return found


class Check(Tool):
    """A check of the current iteration's records."""

    def __init__(self, name: str, description: str, examples: list[str]) -> None:
        self.descriptor = descriptor(
            name, description, {}, [(text, {}) for text in examples], group="validation"
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _, folder = current_iteration(ctx)
        report = self.report(folder)
        failures = sum(len(v) for v in report.values() if isinstance(v, list))
        return ToolOutput({"check": self.descriptor.name, "passed": failures == 0, **report})

    @abc.abstractmethod
    def report(self, folder: Folder) -> dict[str, Any]:
        """The check's findings: lists of failures (empty when it passes) and counts."""


class FeatureCoverage(Check):
    def report(self, folder: Folder) -> dict[str, Any]:
        loaded = load(folder, (REQUIREMENT, FEATURE, COMPONENT, TASK))
        requirements, features, tasks = (
            loaded.records[kind.name] for kind in (REQUIREMENT, FEATURE, TASK)
        )
        covered = {i for f in features for i in f["requirement_ids"]}
        planned = {i for t in tasks for i in t["feature_ids"]}
        return {
            "requirements": len(requirements),
            "features": len(features),
            "uncovered_requirements": [r["id"] for r in requirements if r["id"] not in covered],
            "features_without_tasks": [f["id"] for f in features if f["id"] not in planned],
            # A task's dependencies are check_task_dependencies' to report.
            "dangling": dangling(loaded, skip=frozenset({(TASK.name, "depends_on")})),
            "malformed": loaded.problems,
        }


class TaskDependencies(Check):
    def report(self, folder: Folder) -> dict[str, Any]:
        loaded = load(folder, (TASK, FEATURE))
        tasks = loaded.records[TASK.name]
        features = ids(loaded.records[FEATURE.name])
        known = ids(tasks)
        missing_ids = [
            {"task": t["id"], "missing": missing}
            for t in tasks
            if (missing := [d for d in t["depends_on"] if d not in known]
                + [f for f in t["feature_ids"] if f not in features])
        ]  # fmt: skip
        graph = {t["id"]: [d for d in t["depends_on"] if d in known] for t in tasks}
        return {
            "tasks": len(tasks),
            "dangling": missing_ids,
            "cycles": cycles(graph),
            "malformed": loaded.problems,
        }


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The cycles of a dependency graph, each once, as the ids around it. Iterative (a
    long chain of tasks must not exhaust the stack)."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        state[start] = 1
        path = [start]
        pending = [iter(graph.get(start, []))]
        while pending:
            nxt = next(pending[-1], None)
            if nxt is None:
                pending.pop()
                state[path.pop()] = 2
            elif state.get(nxt) == 1:
                loop = path[path.index(nxt) :]
                if frozenset(loop) not in seen:
                    seen.add(frozenset(loop))
                    found.append([*loop, nxt])
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                pending.append(iter(graph.get(nxt, [])))
    return found


class DataFormat(Check):
    def report(self, folder: Folder) -> dict[str, Any]:
        loaded = load(folder, tuple(KINDS.values()))
        return {
            "records": loaded.checked,
            "problems": loaded.problems,
            "dangling": dangling(loaded),
        }


def check_tools() -> list[Tool]:
    return [
        FeatureCoverage(
            "check_feature_coverage",
            "Check that every requirement is covered by a feature and every feature by a "
            "task; lists what is not, references to records that do not exist and "
            "malformed records.",
            ["Before planning ends", "After adding tasks", "Before delivery"],
        ),
        TaskDependencies(
            "check_task_dependencies",
            "Check the tasks' dependencies: no cycles, no ids of tasks or features that do "
            "not exist.",
            ["Before coding starts", "After reordering tasks", "After deleting a task"],
        ),
        DataFormat(
            "check_data_format",
            "Check every record file of the iteration against its schema (types, required "
            "fields, priorities and statuses), and every reference between records "
            "(requirements, features, components, tasks) for ids that do not exist.",
            ["After editing files by hand", "Before delivery", "After a merge"],
        ),
    ]
