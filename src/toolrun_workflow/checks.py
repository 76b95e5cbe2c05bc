"""Validation tools over the iteration's records, each a structured pass/fail report:
feature coverage, task dependencies, data format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema

from toolrun.errors import ToolExecutionError
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun_workflow.base import descriptor, read_records
from toolrun_workflow.iterations import current_iteration
from toolrun_workflow.records import FEATURE, KINDS, REQUIREMENT, TASK


class Check(Tool):
    """A check of the current iteration's records."""

    def __init__(self, name: str, description: str, examples: list[str]) -> None:
        self.descriptor = descriptor(
            name, description, {}, [(text, {}) for text in examples], group="validation"
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _, directory = current_iteration(ctx)
        report = self.report(directory)
        failures = sum(len(v) for v in report.values() if isinstance(v, list))
        return ToolOutput({"check": self.descriptor.name, "passed": failures == 0, **report})

    def report(self, directory: Path) -> dict[str, Any]:
        raise NotImplementedError


class FeatureCoverage(Check):
    def report(self, directory: Path) -> dict[str, Any]:
        requirements = read_records(REQUIREMENT.path(directory))
        features = read_records(FEATURE.path(directory))
        tasks = read_records(TASK.path(directory))
        covered = {i for f in features for i in f.get("requirement_ids", [])}
        planned = {i for t in tasks for i in t.get("feature_ids", [])}
        return {
            "requirements": len(requirements),
            "features": len(features),
            "uncovered_requirements": [r["id"] for r in requirements if r["id"] not in covered],
            "features_without_tasks": [f["id"] for f in features if f["id"] not in planned],
        }


class TaskDependencies(Check):
    def report(self, directory: Path) -> dict[str, Any]:
        tasks = read_records(TASK.path(directory))
        features = {f["id"] for f in read_records(FEATURE.path(directory))}
        ids = {t["id"] for t in tasks}
        dangling = [
            {"task": t["id"], "missing": missing}
            for t in tasks
            if (missing := [d for d in t.get("depends_on", []) if d not in ids]
                + [f for f in t.get("feature_ids", []) if f not in features])
        ]  # fmt: skip
        graph = {t["id"]: [d for d in t.get("depends_on", []) if d in ids] for t in tasks}
        return {"tasks": len(tasks), "dangling": dangling, "cycles": cycles(graph)}


def cycles(graph: dict[str, list[str]]) -> list[list[str]]:
    """The cycles of a dependency graph, each once, as the ids around it."""
    found: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                loop = path[path.index(nxt) :]
                if frozenset(loop) not in seen:
                    seen.add(frozenset(loop))
                    found.append([*loop, nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


class DataFormat(Check):
    def report(self, directory: Path) -> dict[str, Any]:
        problems: list[dict[str, Any]] = []
        checked = 0
        for kind in KINDS.values():
            path = kind.path(directory)
            try:
                records = read_records(path)
            except ToolExecutionError as exc:
                problems.append({"file": f"data/{kind.file}", "record": None, "error": str(exc)})
                continue
            validator = jsonschema.Draft202012Validator(kind.schema())
            for record in records:
                checked += 1
                for error in validator.iter_errors(record):
                    where = "/".join(str(p) for p in error.absolute_path) or "(record)"
                    problems.append(
                        {
                            "file": f"data/{kind.file}",
                            "record": record.get("id"),
                            "error": f"{where}: {error.message}",
                        }
                    )
        return {"records": checked, "problems": problems}


def check_tools() -> list[Tool]:
    return [
        FeatureCoverage(
            "check_feature_coverage",
            "Check that every requirement is covered by a feature and every feature by a "
            "task; lists what is not.",
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
            "fields, priorities and statuses).",
            ["After editing files by hand", "Before delivery", "After a merge"],
        ),
    ]
