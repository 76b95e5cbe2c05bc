"""What the pack's tools share: their descriptors, and JSON record files kept in the
current iteration's directory (read, changed and written back under a lock, atomically,
never through a symbolic link)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.tools.model import ToolDescriptor, ToolExample
from toolrun_workflow.files import Folder

Example = tuple[str, dict[str, Any]]


def descriptor(
    name: str,
    description: str,
    properties: dict[str, Any],
    examples: list[Example],
    *,
    required: tuple[str, ...] = (),
    group: str,
    permission: PermissionLevel = PermissionLevel.READ_ONLY,
    risk: Risk = Risk.LOW,
    requires_confirmation: bool = False,
    time_limit_s: float = 10.0,
) -> ToolDescriptor:
    """A pack tool's descriptor: category workflow, tags workflow and its group."""
    return ToolDescriptor(
        name=name,
        version="1.0.0",
        description=description,
        parameters={
            "type": "object",
            "properties": properties,
            "required": list(required),
            "additionalProperties": False,
        },
        returns={"type": "object"},
        examples=[ToolExample(description=d, arguments=a) for d, a in examples],
        permission=permission,
        risk=risk,
        tags=["workflow", group],
        category="workflow",
        requires_confirmation=requires_confirmation,
        time_limit_s=time_limit_s,
    )


DATA_LOCK = "data/.lock"  # one writer at a time for all of an iteration's record files


def read_records(folder: Folder, relative: str) -> list[dict[str, Any]]:
    """The records of a file below `folder` (none when it does not exist).

    Raises:
        ToolExecutionError: the file is not a JSON list of objects.
        SandboxViolation: the file, or a directory on the way, is a symbolic link.
    """
    text = folder.read_text(relative)
    if text is None:
        return []
    name = Path(relative).name
    try:
        found = json.loads(text)
    except ValueError as exc:
        raise ToolExecutionError(f"{name} is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise ToolExecutionError(f"{name} is nested too deeply to read") from exc
    if not isinstance(found, list) or not all(isinstance(r, dict) for r in found):
        raise ToolExecutionError(f"{name} must hold a JSON list of objects")
    return found


def write_records(folder: Folder, relative: str, records: list[dict[str, Any]]) -> None:
    """Replace a record file atomically (never half-written, never through a link)."""
    folder.write_text(relative, json.dumps(records, indent=2, ensure_ascii=False) + "\n")


@contextmanager
def changing(folder: Folder, relative: str) -> Iterator[list[dict[str, Any]]]:
    """The records of `relative`, to change in place; written back when the block ends
    without an error. Holds the iteration's data lock, so what the block reads of the
    other record files (references) stays true until it is written."""
    with folder.locked(DATA_LOCK):
        records = read_records(folder, relative)
        yield records
        write_records(folder, relative, records)


def new_record(prefix: str, fields: dict[str, Any]) -> dict[str, Any]:
    now = time.time()
    return {
        "id": f"{prefix}-{uuid.uuid4().hex[:8]}",
        **fields,
        "created_at": now,
        "updated_at": now,
    }


def find(records: list[dict[str, Any]], record_id: str, kind: str) -> dict[str, Any]:
    """The record with `record_id`.

    Raises:
        ToolExecutionError: there is none.
    """
    for record in records:
        if record.get("id") == record_id:
            return record
    known = ", ".join(str(r.get("id")) for r in records) or "none"
    raise ToolExecutionError(f"no {kind} {record_id!r} (known: {known})")


def ids(records: list[dict[str, Any]]) -> set[str]:
    """The ids of `records` (a hand-edited record without a string id has none)."""
    return {r["id"] for r in records if isinstance(r.get("id"), str)}
