"""Where sub-agent definitions come from: registered through the API (stored in the
database, admins only) and Markdown files in the workspace's `.toolrun/agents/`.

A registered definition wins over a workspace file of the same name: agents that may write
files could otherwise replace the prompt of a sub-agent an operator registered.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import JSON, Column
from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, select

from toolrun.errors import SandboxViolation
from toolrun.sandbox.paths import Workspace
from toolrun.subagents.definition import (
    AGENTS_DIR,
    MAX_DEFINITION_BYTES,
    SubAgent,
    SubAgentError,
    parse_markdown,
)

MAX_FILES = 500
Source = Literal["registered", "workspace"]


class SubAgentRecord(SQLModel, table=True):
    """A definition registered through the API."""

    __tablename__ = "subagents"

    name: str = Field(primary_key=True)
    definition: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    registered_at: float
    registered_by: str | None = None


@dataclass(frozen=True)
class Entry:
    """One definition as found: the sub-agent, or why its file could not be read."""

    name: str
    source: Source
    path: str | None  # the workspace file, relative to the workspace
    agent: SubAgent | None
    problem: str | None = None


class SubAgentStore:
    """Registered definitions in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def put(self, agent: SubAgent, *, by: str | None) -> bool:
        """Register `agent`, replacing one of the same name; True when it is new."""
        with Session(self.engine) as session:
            record = session.get(SubAgentRecord, agent.name)
            created = record is None
            record = record or SubAgentRecord(name=agent.name, definition={}, registered_at=0)
            record.definition = agent.model_dump(mode="json")
            record.registered_at = time.time()
            record.registered_by = by
            session.add(record)
            session.commit()
            return created

    def remove(self, name: str) -> bool:
        """Unregister; False when no such definition was registered."""
        with Session(self.engine) as session:
            record = session.get(SubAgentRecord, name)
            if record is None:
                return False
            session.delete(record)
            session.commit()
            return True

    def list(self) -> list[SubAgent]:
        """Every registered definition, by name."""
        with Session(self.engine) as session:
            records = session.exec(select(SubAgentRecord).order_by("name"))
            return [SubAgent.model_validate(record.definition) for record in records]


def workspace_entries(workspace: Workspace) -> list[Entry]:
    """The definitions in `<workspace>/.toolrun/agents/*.md`, by file name; a file that
    cannot be read is listed with its problem. Links that leave the workspace are refused."""
    try:
        folder = workspace.resolve(AGENTS_DIR)
    except SandboxViolation as exc:
        return [Entry(AGENTS_DIR, "workspace", AGENTS_DIR, None, str(exc))]
    if not folder.is_dir():
        return []
    entries = []
    for path in sorted(folder.glob("*.md"))[:MAX_FILES]:
        shown = f"{AGENTS_DIR}/{path.name}"
        try:
            entries.append(_read(workspace, shown))
        except (SubAgentError, SandboxViolation, OSError, UnicodeDecodeError) as exc:
            entries.append(Entry(path.stem, "workspace", shown, None, str(exc)))
    return entries


def _read(workspace: Workspace, shown: str) -> Entry:
    path = workspace.resolve(shown)
    if path.stat().st_size > MAX_DEFINITION_BYTES:
        raise SubAgentError(f"{shown}: larger than {MAX_DEFINITION_BYTES // 1024} KiB")
    agent = parse_markdown(path.read_text(encoding="utf-8"), shown)
    return Entry(agent.name, "workspace", shown, agent)


@dataclass(frozen=True)
class SubAgentCatalog:
    """Registered definitions and the workspace's, as one list."""

    store: SubAgentStore | None  # None: the workspace's only (a local run)
    workspace: Workspace

    def entries(self) -> list[Entry]:
        """Every definition by name; a workspace file shadowed by a registered definition
        of the same name is left out."""
        stored = [] if self.store is None else self.store.list()
        registered = [Entry(a.name, "registered", None, a) for a in stored]
        taken = {entry.name for entry in registered}
        found = [e for e in workspace_entries(self.workspace) if e.name not in taken]
        return sorted(registered + found, key=lambda entry: (entry.name, entry.path or ""))

    def find(self, name: str) -> SubAgent:
        """The definition named `name`.

        Raises:
            SubAgentError: there is none, or its file cannot be read.
        """
        entries = self.entries()
        for entry in entries:
            if entry.name == name:
                if entry.agent is None:
                    raise SubAgentError(f"sub-agent {name}: {entry.problem}")
                return entry.agent
        known = ", ".join(sorted({e.name for e in entries if e.agent is not None})) or "(none)"
        bad = "".join(f"; {e.path}: {e.problem}" for e in entries if e.problem)
        raise SubAgentError(
            f"no sub-agent named {name!r} (registered, or in {AGENTS_DIR}/); known: {known}{bad}"
        )
