"""External MCP servers imported into the registry: where each is reached (a command over
stdio, or a Streamable HTTP URL), the permission level its tools run at, and the tools it
listed at import. Stored in the database, the one place every API process and worker
reads them from (like plugins; an import bumps the same generation counter)."""

from __future__ import annotations

import builtins
import os
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, Column
from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, select

from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.plugins.store import bump_generation
from toolrun.tools.model import ToolDescriptor

_SERVER_NAME = re.compile(r"^[a-z][a-z0-9_]{0,23}$")
_NOT_NAME = re.compile(r"[^a-z0-9_]+")
# The risk the built-in tools of each level declare (read, write files, run programs,
# administer the repository).
LEVEL_RISK = {
    PermissionLevel.READ_ONLY: Risk.LOW,
    PermissionLevel.READ_WRITE: Risk.MEDIUM,
    PermissionLevel.EXECUTE: Risk.HIGH,
    PermissionLevel.ADMIN: Risk.HIGH,
}


class McpServerRecord(SQLModel, table=True):
    """One imported server."""

    __tablename__ = "mcp_servers"

    name: str = Field(primary_key=True)
    command: list[str] | None = Field(default=None, sa_column=Column(JSON))
    env: dict[str, str] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    permission: str
    time_limit_s: float
    tools: list[dict[str, Any]] = Field(sa_column=Column(JSON, nullable=False))
    imported_at: float
    imported_by: str | None = None


@dataclass(frozen=True)
class McpEndpoint:
    """How to reach a server: `command` (stdio) or `url` (Streamable HTTP)."""

    command: tuple[str, ...] | None = None
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError("an MCP server is reached by a command or by a URL (one of them)")
        if self.command is not None and not self.command:
            raise ValueError("the command is empty")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"not an http(s) URL: {self.url!r}")

    def describe(self) -> str:
        return " ".join(self.command) if self.command else str(self.url)


@dataclass(frozen=True)
class ImportedTool:
    """A server's tool as a toolrun tool: `remote` is its name on the server."""

    remote: str
    descriptor: ToolDescriptor


@dataclass(frozen=True)
class ImportedServer:
    name: str
    endpoint: McpEndpoint
    permission: PermissionLevel
    tools: list[ImportedTool]
    imported_at: float


def resolved_command(command: Sequence[str], cwd: Path) -> tuple[str, ...]:
    """`command` as typed in `cwd`, made to start the same program from any directory (a
    call's server starts in the workspace): the program by its absolute path, found as
    the shell would, and arguments that name a file or directory in `cwd` made absolute.

    Raises:
        ValueError: no such program.
    """
    program, *arguments = command
    if os.sep in program:
        candidate = cwd / program
        found = str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    else:
        found = shutil.which(program)
    if found is None:
        raise ValueError(f"no program {program!r} (relative to {cwd}, or on PATH)")
    made = [
        os.path.abspath(cwd / arg)
        if arg and not arg.startswith("-") and not os.path.isabs(arg) and (cwd / arg).exists()
        else arg
        for arg in arguments
    ]
    return (os.path.abspath(found), *made)


def server_name(name: str) -> str:
    """`name` if it can namespace tools (lowercase letters, digits, '_').

    Raises:
        ValueError: it cannot.
    """
    if not _SERVER_NAME.fullmatch(name):
        raise ValueError(
            f"server name {name!r} must be lowercase letters, digits and '_', starting with "
            "a letter (at most 24 characters)"
        )
    return name


def tool_name(server: str, remote: str) -> str:
    """The registry name of a server's tool: ``server.snake_name``."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", remote).lower()
    local = _NOT_NAME.sub("_", words).strip("_") or "tool"
    if not local[0].isalpha():
        local = f"t_{local}"
    return f"{server}.{local}"[:64]


def imported_risk(annotations: dict[str, Any], level: PermissionLevel) -> Risk:
    """The risk of a server's tool from what its annotations say, at `level`: a tool that
    only reads is low; one that only adds (destructiveHint false) one step below the
    level's risk; any other (MCP's default: it may destroy) the level's risk, and at least
    medium when it says it destroys."""
    if annotations.get("readOnlyHint") is True:
        return Risk.LOW
    usual = LEVEL_RISK[level]
    destructive = annotations.get("destructiveHint")
    if destructive is False:
        return list(Risk)[max(list(Risk).index(usual) - 1, 0)]
    if destructive is True and usual is Risk.LOW:
        return Risk.MEDIUM
    return usual


def descriptor_of(
    server: str,
    remote: dict[str, Any],
    permission: PermissionLevel,
    time_limit_s: float,
    risk: Risk | None = None,
) -> ToolDescriptor:
    """A descriptor for one tool of a server's tools/list answer; its risk is `risk`, else
    derived from the tool's annotations (`imported_risk`).

    Raises:
        InvalidDescriptor: the tool's schema is not usable (the message says where).
    """
    schema = dict(remote.get("inputSchema") or {})
    schema.setdefault("type", "object")
    output = remote.get("outputSchema")
    annotations = remote.get("annotations") or {}
    if not isinstance(annotations, dict):
        annotations = {}
    title = annotations.get("title") or remote.get("title")
    description = (
        remote.get("description") or title or f"{remote['name']} (from MCP server {server})"
    )
    return ToolDescriptor.parse(
        {
            "name": tool_name(server, remote["name"]),
            "version": "1.0.0",
            "description": description,
            "parameters": schema,
            "returns": output if isinstance(output, dict) else {},
            "examples": [],
            "permission": permission,
            "risk": risk or imported_risk(annotations, permission),
            # The server's word: it only reads, or a second run changes nothing more.
            "repeat_safe": bool(
                annotations.get("readOnlyHint") is True or annotations.get("idempotentHint") is True
            ),
            "tags": ["mcp", server],
            "category": "mcp",
            "time_limit_s": time_limit_s,
            "notes": [f"Proxied to the MCP server {server!r}, tool {remote['name']!r}."],
            "imported_from": server,
        }
    )


class McpImports:
    """The imported servers."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def save(
        self,
        name: str,
        endpoint: McpEndpoint,
        permission: PermissionLevel,
        time_limit_s: float,
        tools: list[ImportedTool],
        imported_by: str | None = None,
    ) -> None:
        """Store (or replace) a server and its tools."""
        record = McpServerRecord(
            name=server_name(name),
            command=None if endpoint.command is None else list(endpoint.command),
            env=endpoint.env,
            url=endpoint.url,
            headers=endpoint.headers,
            permission=permission.value,
            time_limit_s=time_limit_s,
            tools=[
                {"remote": t.remote, "descriptor": t.descriptor.model_dump(mode="json")}
                for t in tools
            ],
            imported_at=time.time(),
            imported_by=imported_by,
        )
        with Session(self.engine) as session:
            session.merge(record)
            bump_generation(session)
            session.commit()

    def remove(self, name: str) -> bool:
        with Session(self.engine) as session:
            found = session.get(McpServerRecord, name)
            if found is None:
                return False
            session.delete(found)
            bump_generation(session)
            session.commit()
            return True

    def list(self) -> builtins.list[ImportedServer]:
        with Session(self.engine) as session:
            records = session.exec(select(McpServerRecord).order_by(McpServerRecord.name))
            return [_server(record) for record in records]


def _server(record: McpServerRecord) -> ImportedServer:
    endpoint = McpEndpoint(
        command=None if record.command is None else tuple(record.command),
        env=dict(record.env),
        url=record.url,
        headers=dict(record.headers),
    )
    tools = [
        ImportedTool(t["remote"], ToolDescriptor.model_validate(t["descriptor"]))
        for t in record.tools
    ]
    return ImportedServer(
        record.name, endpoint, PermissionLevel(record.permission), tools, record.imported_at
    )
