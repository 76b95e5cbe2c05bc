"""Data tools over the iteration's typed records — requirements, features, design
components and tasks — each with an id and timestamps, kept as JSON lists in the
iteration's data/ directory. References (a feature's requirements, a component's and a
task's features, a task's dependencies) must name existing records, and a record still
named by another is not deleted."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any

import jsonschema.protocols

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.validation import validator_for
from toolrun_workflow.base import (
    Example,
    changing,
    descriptor,
    find,
    ids,
    new_record,
    read_records,
)
from toolrun_workflow.files import Folder
from toolrun_workflow.iterations import current_iteration

PRIORITIES = ["Critical", "High", "Medium", "Low"]
_TEXT = {"type": "string", "minLength": 1, "maxLength": 10_000}
_TITLE = {"type": "string", "minLength": 1, "maxLength": 200}
_IDS = {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True}


@dataclass(frozen=True)
class Kind:
    """One kind of record: its file, id prefix, fields, and which fields name records of
    which kinds."""

    name: str
    file: str
    prefix: str
    fields: dict[str, Any]
    required: tuple[str, ...]
    references: dict[str, str] = field(default_factory=dict)  # field → kind name

    @property
    def relative(self) -> str:
        """Its file, relative to the iteration's directory."""
        return f"data/{self.file}"

    def schema(self) -> dict[str, Any]:
        """The JSON Schema a stored record must meet (check_data_format)."""
        stamps = {
            "id": {"type": "string"},
            "created_at": {"type": "number"},
            "updated_at": {"type": "number"},
        }
        return {
            "type": "object",
            "properties": {**self.fields, **stamps},
            "required": ["id", *self.required, "created_at", "updated_at"],
            "additionalProperties": False,
        }


REQUIREMENT = Kind(
    "requirement",
    "requirements.json",
    "req",
    {
        "title": _TITLE,
        "description": _TEXT,
        "priority": {"enum": PRIORITIES},
        "status": {"enum": ["draft", "approved", "implemented", "verified"]},
        "acceptance_criteria": {"type": "array", "items": _TEXT},
    },
    ("title", "description", "priority", "status", "acceptance_criteria"),
)
FEATURE = Kind(
    "feature",
    "features.json",
    "feat",
    {
        "title": _TITLE,
        "description": _TEXT,
        "requirement_ids": _IDS,
        "status": {"enum": ["planned", "in_progress", "done"]},
    },
    ("title", "description", "requirement_ids", "status"),
    {"requirement_ids": "requirement"},
)
COMPONENT = Kind(
    "component",
    "components.json",
    "comp",
    {
        "name": _TITLE,
        "description": _TEXT,
        "responsibilities": {"type": "array", "items": _TEXT},
        "feature_ids": _IDS,
    },
    ("name", "description", "responsibilities", "feature_ids"),
    {"feature_ids": "feature"},
)
TASK = Kind(
    "task",
    "tasks.json",
    "task",
    {
        "title": _TITLE,
        "description": _TEXT,
        "feature_ids": _IDS,
        "depends_on": _IDS,
        "status": {"enum": ["todo", "in_progress", "done", "blocked"]},
    },
    ("title", "description", "feature_ids", "depends_on", "status"),
    {"feature_ids": "feature", "depends_on": "task"},
)
KINDS = {kind.name: kind for kind in (REQUIREMENT, FEATURE, COMPONENT, TASK)}


@functools.cache
def _validator(kind: str) -> jsonschema.protocols.Validator:
    return validator_for(KINDS[kind].schema())


def problems(kind: Kind, record: dict[str, Any]) -> list[str]:
    """What is wrong with a stored record, against its kind's schema ("field: reason")."""
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(record)'}: {error.message}"
        for error in _validator(kind.name).iter_errors(record)
    ]


def _checked_shape(kind: Kind, record: dict[str, Any]) -> None:
    found = problems(kind, record)
    if found:
        raise ToolExecutionError(
            f"{kind.name} {record.get('id')!r} in {kind.relative} is malformed "
            f"({'; '.join(found)}): fix the file (check_data_format lists every problem)"
        )


def _checked_references(
    kind: Kind, record: dict[str, Any], folder: Folder, own: list[dict[str, Any]]
) -> None:
    for name, other in kind.references.items():
        existing = own if other == kind.name else read_records(folder, KINDS[other].relative)
        known = ids(existing) - {record["id"]}
        missing = [i for i in record[name] if i not in known]
        if missing:
            raise ToolExecutionError(f"{name} names no existing {other}: {', '.join(missing)}")


def referrers(kind: Kind, record_id: str, folder: Folder, own: list[dict[str, Any]]) -> list[str]:
    """The records that name `record_id` of `kind` ("feature feat-1a2b3c4d")."""
    found = []
    for other in KINDS.values():
        fields = [name for name, target in other.references.items() if target == kind.name]
        if not fields:
            continue
        records = own if other is kind else read_records(folder, other.relative)
        found += [
            f"{other.name} {r.get('id')}"
            for r in records
            if r.get("id") != record_id
            and any(isinstance(r.get(f), list) and record_id in r[f] for f in fields)
        ]
    return found


class CreateRecord(Tool):
    def __init__(
        self,
        name: str,
        kind: Kind,
        inputs: tuple[str, ...],
        defaults: dict[str, Any],
        examples: list[Example],
    ) -> None:
        self.kind, self.defaults = kind, defaults
        self.descriptor = descriptor(
            name,
            f"Create a {kind.name} in the current iteration; returns it with its id.",
            {key: kind.fields[key] for key in inputs},
            examples,
            required=tuple(key for key in inputs if key not in defaults),
            group="data",
            permission=PermissionLevel.READ_WRITE,
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _, folder = current_iteration(ctx)
        record = new_record(self.kind.prefix, {**self.defaults, **arguments})
        with changing(folder, self.kind.relative) as records:
            _checked_references(self.kind, record, folder, records)
            records.append(record)
        return ToolOutput(record)


class UpdateRecord(Tool):
    def __init__(
        self, name: str, kind: Kind, changeable: tuple[str, ...], examples: list[Example]
    ) -> None:
        self.kind = kind
        only = len(changeable) == 1
        self.descriptor = descriptor(
            name,
            f"Change the {changeable[0]} of a {kind.name}"
            if only
            else f"Change fields of a {kind.name} (only those given); returns it.",
            {
                "id": {"type": "string", "minLength": 1},
                **{key: kind.fields[key] for key in changeable},
            },
            examples,
            required=("id", *changeable) if only else ("id",),
            group="data",
            permission=PermissionLevel.READ_WRITE,
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _, folder = current_iteration(ctx)
        changes = {k: v for k, v in arguments.items() if k != "id"}
        with changing(folder, self.kind.relative) as records:
            record = find(records, arguments["id"], self.kind.name)
            record.update(changes, updated_at=time.time())
            _checked_shape(self.kind, record)
            _checked_references(self.kind, record, folder, records)
        return ToolOutput(record)


class DeleteRecord(Tool):
    def __init__(self, name: str, kind: Kind, examples: list[Example]) -> None:
        self.kind = kind
        self.descriptor = descriptor(
            name,
            f"Delete a {kind.name} by id; refused while other records still name it.",
            {"id": {"type": "string", "minLength": 1}},
            examples,
            required=("id",),
            group="data",
            permission=PermissionLevel.READ_WRITE,
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _, folder = current_iteration(ctx)
        with changing(folder, self.kind.relative) as records:
            record = find(records, arguments["id"], self.kind.name)
            named_by = referrers(self.kind, arguments["id"], folder, records)
            if named_by:
                raise ToolExecutionError(
                    f"{self.kind.name} {arguments['id']} is still named by "
                    f"{', '.join(named_by)}: change or delete those first"
                )
            records.remove(record)
        return ToolOutput({"deleted": arguments["id"]})


class ListRequirements(Tool):
    descriptor = descriptor(
        "get_requirements",
        "The iteration's requirements, optionally only those of one status or priority.",
        {"status": REQUIREMENT.fields["status"], "priority": REQUIREMENT.fields["priority"]},
        [
            ("All requirements", {}),
            ("The critical ones", {"priority": "Critical"}),
            ("Those approved", {"status": "approved"}),
        ],
        group="data",
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _, folder = current_iteration(ctx)
        found = [
            r
            for r in read_records(folder, REQUIREMENT.relative)
            if all(r.get(key) == value for key, value in arguments.items())
        ]
        return ToolOutput({"requirements": found, "count": len(found)})


class GetWithDocument(Tool):
    """A document and the records that go with it (the design, or the plan)."""

    def __init__(self, name: str, document: str, kind: Kind, key: str) -> None:
        self.document, self.kind, self.key = document, kind, key
        self.descriptor = descriptor(
            name,
            f"The iteration's {document} (null if not saved) and its {kind.name}s.",
            {},
            [
                (f"The whole {key}", {}),
                (f"The {kind.name}s to work on", {}),
                (f"Review the {key}", {}),
            ],
            group="data",
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        _, folder = current_iteration(ctx)
        return ToolOutput(
            {
                "document": folder.read_text(self.document),
                f"{self.kind.name}s": read_records(folder, self.kind.relative),
            }
        )


def record_tools() -> list[Tool]:
    return [
        CreateRecord(
            "create_requirement",
            REQUIREMENT,
            ("title", "description", "priority", "acceptance_criteria", "status"),
            {"status": "draft", "acceptance_criteria": []},
            [
                (
                    "A critical requirement",
                    {
                        "title": "Export",
                        "description": "Users export data as CSV.",
                        "priority": "Critical",
                        "acceptance_criteria": ["A CSV file downloads"],
                    },
                ),
                (
                    "A low one, approved",
                    {
                        "title": "Dark mode",
                        "description": "A dark theme.",
                        "priority": "Low",
                        "status": "approved",
                    },
                ),
                (
                    "A medium one",
                    {"title": "Search", "description": "Search by name.", "priority": "Medium"},
                ),
            ],
        ),
        UpdateRecord(
            "update_requirement",
            REQUIREMENT,
            ("title", "description", "priority", "status", "acceptance_criteria"),
            [
                ("Approve it", {"id": "req-1a2b3c4d", "status": "approved"}),
                ("Raise its priority", {"id": "req-1a2b3c4d", "priority": "High"}),
                (
                    "Add a criterion",
                    {"id": "req-1a2b3c4d", "acceptance_criteria": ["Works offline"]},
                ),
            ],
        ),
        DeleteRecord(
            "delete_requirement",
            REQUIREMENT,
            [
                ("Drop one", {"id": "req-1a2b3c4d"}),
                ("Remove a duplicate", {"id": "req-0f0f0f0f"}),
                ("Delete a stale one", {"id": "req-deadbeef"}),
            ],
        ),
        ListRequirements(),
        CreateRecord(
            "add_feature",
            FEATURE,
            ("title", "description", "requirement_ids", "status"),
            {"status": "planned"},
            [
                (
                    "A feature for one requirement",
                    {
                        "title": "CSV export button",
                        "description": "A button that exports.",
                        "requirement_ids": ["req-1a2b3c4d"],
                    },
                ),
                (
                    "One covering two",
                    {
                        "title": "Search box",
                        "description": "Type to search.",
                        "requirement_ids": ["req-1a2b3c4d", "req-0f0f0f0f"],
                    },
                ),
                (
                    "One already started",
                    {
                        "title": "Theme switch",
                        "description": "Toggle dark mode.",
                        "requirement_ids": ["req-deadbeef"],
                        "status": "in_progress",
                    },
                ),
            ],
        ),
        UpdateRecord(
            "update_feature_status",
            FEATURE,
            ("status",),
            [
                ("Start it", {"id": "feat-1a2b3c4d", "status": "in_progress"}),
                ("Finish it", {"id": "feat-1a2b3c4d", "status": "done"}),
                ("Back to planned", {"id": "feat-1a2b3c4d", "status": "planned"}),
            ],
        ),
        CreateRecord(
            "create_design_component",
            COMPONENT,
            ("name", "description", "responsibilities", "feature_ids"),
            {"responsibilities": [], "feature_ids": []},
            [
                (
                    "An exporter",
                    {
                        "name": "Exporter",
                        "description": "Writes CSV.",
                        "feature_ids": ["feat-1a2b3c4d"],
                    },
                ),
                (
                    "A service with duties",
                    {
                        "name": "SearchService",
                        "description": "Answers queries.",
                        "responsibilities": ["index", "rank"],
                    },
                ),
                ("A bare component", {"name": "Theme", "description": "Colours."}),
            ],
        ),
        GetWithDocument("get_design", "design.md", COMPONENT, "design"),
        CreateRecord(
            "create_task",
            TASK,
            ("title", "description", "feature_ids", "depends_on", "status"),
            {"status": "todo", "depends_on": [], "feature_ids": []},
            [
                (
                    "A first task",
                    {
                        "title": "Write the exporter",
                        "description": "CSV writer.",
                        "feature_ids": ["feat-1a2b3c4d"],
                    },
                ),
                (
                    "One after another",
                    {
                        "title": "Test the exporter",
                        "description": "Unit tests.",
                        "depends_on": ["task-1a2b3c4d"],
                    },
                ),
                (
                    "A blocked one",
                    {"title": "Deploy", "description": "Ship it.", "status": "blocked"},
                ),
            ],
        ),
        UpdateRecord(
            "update_task_status",
            TASK,
            ("status",),
            [
                ("Start it", {"id": "task-1a2b3c4d", "status": "in_progress"}),
                ("Done", {"id": "task-1a2b3c4d", "status": "done"}),
                ("Blocked", {"id": "task-1a2b3c4d", "status": "blocked"}),
            ],
        ),
        GetWithDocument("get_plan", "plan.md", TASK, "plan"),
    ]
