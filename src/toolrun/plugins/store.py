"""Registered plugins in the database, the one place every API process and worker reads
them from: each version's descriptor, and its module stored once by content hash."""

from __future__ import annotations

import builtins
import hashlib
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, Column, LargeBinary, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, SQLModel, col, select

from toolrun.errors import DuplicateTool
from toolrun.plugins.tool import WorkspaceAccess
from toolrun.tools.model import ToolDescriptor


class PluginModuleRecord(SQLModel, table=True):
    """A module's bytes, stored once however many versions use it."""

    __tablename__ = "plugin_modules"

    digest: str = Field(primary_key=True)  # SHA-256, hex
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    size: int
    stored_at: float


class PluginRecord(SQLModel, table=True):
    """One registered plugin version; `removed_at` is set when it is unregistered."""

    __tablename__ = "plugins"

    name: str = Field(primary_key=True)
    version: str = Field(primary_key=True)
    digest: str = Field(foreign_key="plugin_modules.digest")
    descriptor: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    workspace: str = WorkspaceAccess.NONE.value
    registered_at: float
    registered_by: str | None = None
    removed_at: float | None = Field(default=None, index=True)


class PluginGeneration(SQLModel, table=True):
    """One row counting every register and remove: a registry loads the plugins again
    when it moves (a counter, not a timestamp, so clock skew between hosts cannot hide a
    change)."""

    __tablename__ = "plugin_generation"

    id: int = Field(default=1, primary_key=True)
    value: int = 0


@dataclass(frozen=True)
class Plugin:
    """A registered version, as the registries load it."""

    descriptor: ToolDescriptor
    workspace: WorkspaceAccess
    digest: str


class PluginStore:
    """Plugins in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def register(
        self,
        descriptor: ToolDescriptor,
        workspace: WorkspaceAccess,
        wasm: bytes,
        registered_by: str | None = None,
    ) -> str:
        """Store a new version (and its module, unless stored already); returns the digest.

        Raises:
            DuplicateTool: this name@version is registered (a removed one may come back).
        """
        digest = hashlib.sha256(wasm).hexdigest()
        now = time.time()
        with Session(self.engine) as session:
            if session.get(PluginModuleRecord, digest) is None:
                session.add(
                    PluginModuleRecord(digest=digest, data=wasm, size=len(wasm), stored_at=now)
                )
                session.flush()
            old = session.get(PluginRecord, (descriptor.name, descriptor.version))
            if old is not None and old.removed_at is None:
                raise DuplicateTool(f"{descriptor.tool_id} is already registered")
            if old is not None:
                session.delete(old)
                session.flush()
            session.add(
                PluginRecord(
                    name=descriptor.name,
                    version=descriptor.version,
                    digest=digest,
                    descriptor=descriptor.model_dump(mode="json"),
                    workspace=workspace.value,
                    registered_at=now,
                    registered_by=registered_by,
                )
            )
            bump_generation(session)
            try:
                session.commit()
            except IntegrityError as exc:  # another process registered it meanwhile
                raise DuplicateTool(f"{descriptor.tool_id} is already registered") from exc
        return digest

    def active(self) -> builtins.list[Plugin]:
        """Every registered version not removed, by name then registration."""
        query = (
            select(PluginRecord)
            .where(col(PluginRecord.removed_at).is_(None))
            .order_by(col(PluginRecord.name), col(PluginRecord.registered_at))
        )
        with Session(self.engine) as session:
            return [
                Plugin(
                    ToolDescriptor.model_validate(record.descriptor),
                    WorkspaceAccess(record.workspace),
                    record.digest,
                )
                for record in session.exec(query)
            ]

    def module(self, digest: str) -> bytes | None:
        with Session(self.engine) as session:
            record = session.get(PluginModuleRecord, digest)
            return None if record is None else record.data

    def remove(self, name: str, version: str | None = None) -> builtins.list[str]:
        """Unregister a version (or every version); returns the versions removed."""
        query = update(PluginRecord).where(
            col(PluginRecord.name) == name, col(PluginRecord.removed_at).is_(None)
        )
        if version is not None:
            query = query.where(col(PluginRecord.version) == version)
        with Session(self.engine) as session:
            chosen = select(PluginRecord.version).where(
                col(PluginRecord.name) == name, col(PluginRecord.removed_at).is_(None)
            )
            if version is not None:
                chosen = chosen.where(col(PluginRecord.version) == version)
            versions = list(session.exec(chosen))
            if versions:
                session.exec(query.values(removed_at=time.time()))
                bump_generation(session)
                session.commit()
        return versions

    def generation(self) -> int:
        """How many times the plugins changed; a registry loads them again when it moves."""
        with Session(self.engine) as session:
            found = session.get(PluginGeneration, 1)
            return 0 if found is None else found.value


def bump_generation(session: Session) -> None:
    """Count a change of the registry's stored tools (plugins, imported MCP tools), in
    the transaction that makes it."""
    session.exec(
        update(PluginGeneration)
        .where(col(PluginGeneration.id) == 1)
        .values(value=PluginGeneration.value + 1)
    )
