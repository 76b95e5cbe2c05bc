"""What the pack's tools share: their descriptors, and JSON record files kept in the
current iteration's directory (read, changed and written back under a lock, atomically)."""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.tools.model import ToolDescriptor, ToolExample

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


def write_json_atomic(path: Path, value: Any) -> None:
    """Write `value` as JSON through a temporary file and a rename: never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            json.dump(value, file, indent=2, ensure_ascii=False)
            file.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_records(path: Path) -> list[dict[str, Any]]:
    """The records of a file (none when it does not exist).

    Raises:
        ToolExecutionError: the file is not a JSON list of objects.
    """
    if not path.exists():
        return []
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ToolExecutionError(f"{path.name} is not valid JSON: {exc}") from exc
    if not isinstance(found, list) or not all(isinstance(r, dict) for r in found):
        raise ToolExecutionError(f"{path.name} must hold a JSON list of objects")
    return found


@contextmanager
def changing(path: Path) -> Iterator[list[dict[str, Any]]]:
    """The records of `path`, to change in place; written back when the block ends
    without an error (one writer at a time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with (path.parent / f".{path.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        records = read_records(path)
        yield records
        write_json_atomic(path, records)


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


def unknown_ids(wanted: list[str], records: list[dict[str, Any]]) -> list[str]:
    have = {r.get("id") for r in records}
    return [i for i in wanted if i not in have]


Check = Callable[[list[dict[str, Any]]], None]
