"""Iterations of a staged pipeline (idea → PRD → design → plan → coding → check →
delivery): each has an id, a workspace directory inside the platform's workspace and a
current stage. Kept in the platform's database in this pack's own table, created on
first use (a pack brings its own schema), with the memory entries."""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Column, MetaData, Text
from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, col, select

from toolrun.database import open_database
from toolrun.errors import ToolExecutionError
from toolrun.tools.base import ToolContext
from toolrun_workflow.files import Folder

STAGES = ("idea", "prd", "design", "plan", "coding", "check", "delivery")
# Where a stage may go next: forward one step, or back to rework an earlier stage.
TRANSITIONS = {
    "idea": {"prd"},
    "prd": {"design", "idea"},
    "design": {"plan", "prd"},
    "plan": {"coding", "design"},
    "coding": {"check", "plan"},
    "check": {"delivery", "coding"},
    "delivery": {"check"},
}
ROOT = ".iterations"  # below the platform's workspace
WORK = "workspace"  # an iteration's code: where commands run, copied to the project on delivery
TABLE = "workflow_iterations"


class PackModel(SQLModel):
    """The pack's tables live in their own metadata: toolrun's migrations never see them."""

    metadata = MetaData()


class IterationRecord(PackModel, table=True):
    __tablename__ = TABLE

    id: str = Field(primary_key=True)
    name: str
    stage: str
    current: bool = Field(default=False, index=True)
    test_command: str | None = None  # what check_tests runs
    lint_command: str | None = None  # what check_lint runs
    created_at: float
    updated_at: float


class MemoryRecord(PackModel, table=True):
    """An insight, learning or issue saved to memory (memory.py)."""

    __tablename__ = "workflow_memory"

    id: str = Field(primary_key=True)
    kind: str = Field(index=True)
    text: str = Field(sa_column=Column(Text, nullable=False))
    iteration_id: str = Field(index=True)
    stage: str
    created_at: float


@dataclass(frozen=True)
class Iteration:
    id: str
    name: str
    stage: str
    directory: Path  # relative to the platform's workspace
    test_command: str | None = None
    lint_command: str | None = None


def _iteration(record: IterationRecord) -> Iteration:
    return Iteration(
        record.id,
        record.name,
        record.stage,
        Path(ROOT) / record.id,
        record.test_command,
        record.lint_command,
    )


class IterationStore:
    """The iterations; one of them is current."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        PackModel.metadata.create_all(engine)

    def start(
        self, name: str, test_command: str | None = None, lint_command: str | None = None
    ) -> Iteration:
        """A new iteration at the idea stage, made current."""
        now = time.time()
        record = IterationRecord(
            id=uuid.uuid4().hex[:12],
            name=name,
            stage=STAGES[0],
            current=True,
            test_command=test_command,
            lint_command=lint_command,
            created_at=now,
            updated_at=now,
        )
        with Session(self.engine) as session:
            for other in session.exec(select(IterationRecord).where(col(IterationRecord.current))):
                other.current = False
                session.add(other)
            session.add(record)
            session.commit()
            return _iteration(record)

    def current(self) -> Iteration | None:
        with Session(self.engine) as session:
            found = session.exec(
                select(IterationRecord).where(col(IterationRecord.current))
            ).first()
            return None if found is None else _iteration(found)

    def move(self, iteration_id: str, stage: str) -> Iteration:
        """Go to `stage` if the current one allows it.

        Raises:
            ToolExecutionError: no such iteration, or the transition is not allowed.
        """
        with Session(self.engine) as session:
            record = session.get(IterationRecord, iteration_id)
            if record is None:
                raise ToolExecutionError(f"no iteration {iteration_id}")
            if stage not in TRANSITIONS[record.stage]:
                allowed = ", ".join(sorted(TRANSITIONS[record.stage]))
                raise ToolExecutionError(
                    f"cannot go from {record.stage} to {stage}; from {record.stage}: {allowed}"
                )
            record.stage, record.updated_at = stage, time.time()
            session.add(record)
            session.commit()
            return _iteration(record)


_stores: dict[tuple[int, str], IterationStore] = {}
_lock = threading.Lock()


def store_for(ctx: ToolContext) -> IterationStore:
    """The iteration store of the platform's database (one per process)."""
    key = (os.getpid(), ctx.settings.database)
    with _lock:
        if key not in _stores:
            _stores[key] = IterationStore(open_database(ctx.settings.database))
        return _stores[key]


def current_iteration(ctx: ToolContext) -> tuple[Iteration, Folder]:
    """The current iteration and its directory (made if missing, inside the workspace,
    reached through no symbolic link).

    Raises:
        ToolExecutionError: no iteration was started.
        SandboxViolation: the directory, or `.iterations/`, is a symbolic link.
    """
    found = store_for(ctx).current()
    if found is None:
        raise ToolExecutionError("no current iteration: start one with start_iteration")
    return found, Folder.top(ctx.workspace).folder(str(found.directory))
