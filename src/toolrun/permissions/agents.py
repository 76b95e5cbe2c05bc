"""Agent profiles and their bearer tokens: who is calling, what it may call, what it may do.

Tokens are 256-bit random strings shown once; only their SHA-256 is stored (a slow hash
adds nothing for keys this long, and lookups stay one indexed query).
"""

from __future__ import annotations

import hashlib
import secrets
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import JSON, Column
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Field, Session, SQLModel, select

from toolrun.errors import ToolrunError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.quotas import NO_QUOTA, Quota
from toolrun.permissions.roles import Role
from toolrun.tools.model import ToolDescriptor
from toolrun.tools.semver import VersionRange

TOKEN_PREFIX = "trk_"  # noqa: S105 - marks toolrun tokens (secret scanners), not a secret
# A revoked token keeps working for at most this long in a process that saw it recently.
CACHE_TTL_S = 5.0
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789_.-")
RESERVED_NAMES = frozenset({"me"})  # GET /v1/agents/me is the caller's own profile


class AgentError(ToolrunError):
    """A profile cannot be created or changed as asked (bad name, pin, duplicate)."""


class AgentRecord(SQLModel, table=True):
    """One agent profile as stored."""

    __tablename__ = "agents"

    id: str = Field(primary_key=True)
    name: str = Field(unique=True, index=True)
    role: str
    ceiling: str
    tools: list[str] | None = Field(default=None, sa_column=Column(JSON))
    pins: list[str] = Field(default_factory=list, sa_column=Column(JSON))
    token_hash: str = Field(unique=True, index=True)
    created_at: float
    revoked: bool = False
    # Quotas (`permissions.quotas`); None: the platform's default.
    rate_per_s: float | None = None
    burst: int | None = None
    max_in_flight: int | None = None
    max_queued: int | None = None


@dataclass(frozen=True)
class AgentProfile:
    """An authenticated caller: identity, role, permission ceiling, tool filter and pins."""

    id: str
    name: str
    role: Role
    ceiling: PermissionLevel
    tools: frozenset[str] | None = None  # tool names and "tag:<tag>"; None: every tool
    pins: tuple[tuple[str, VersionRange], ...] = ()
    quota: Quota = NO_QUOTA  # its own limits; the platform's defaults fill the rest

    @classmethod
    def from_record(cls, record: AgentRecord) -> AgentProfile:
        return cls(
            id=record.id,
            name=record.name,
            role=Role(record.role),
            ceiling=PermissionLevel(record.ceiling),
            tools=None if record.tools is None else frozenset(record.tools),
            pins=tuple(parse_pin(pin) for pin in record.pins),
            quota=Quota(
                rate_per_s=record.rate_per_s,
                burst=record.burst,
                max_in_flight=record.max_in_flight,
                max_queued=record.max_queued,
            ),
        )

    def sees(self, descriptor: ToolDescriptor) -> bool:
        """True when the tool is in this agent's tool set (`in_tool_set`)."""
        return in_tool_set(self.tools, descriptor)

    def pin(self, tool_name: str) -> VersionRange | None:
        """The version range this agent is held to for `tool_name`, if any."""
        return next((wanted for name, wanted in self.pins if name == tool_name), None)

    def refusal(self, descriptor: ToolDescriptor) -> str | None:
        """Why this agent may not call the tool (its ceiling first), or None when it may."""
        if not self.ceiling.allows(descriptor.permission):
            return (
                f"agent may not call this tool (needs {descriptor.permission}, has {self.ceiling})"
            )
        if not self.sees(descriptor):
            return f"tool {descriptor.name} is not in the tool set of agent {self.name}"
        pinned = self.pin(descriptor.name)
        if pinned is not None and not pinned.matches(descriptor.semver):
            return f"agent {self.name} is pinned to {descriptor.name}@{pinned}"
        return None


def _check_quota(quota: Quota) -> None:
    problem = quota.problem()
    if problem is not None:
        raise AgentError(problem)


def in_tool_set(tools: frozenset[str] | None, descriptor: ToolDescriptor) -> bool:
    """True when a tool set (None: every tool) holds the tool: by name, or by a
    ``tag:<tag>`` entry naming one of its tags."""
    if tools is None:
        return True
    tags = {f"tag:{tag}" for tag in descriptor.tags}
    return descriptor.name in tools or not tools.isdisjoint(tags)


def parse_pin(text: str) -> tuple[str, VersionRange]:
    """``grep@^1.2`` → ("grep", range).

    Raises:
        AgentError: not ``name@range``.
    """
    name, at, wanted = text.partition("@")
    if not at or not name or not wanted:
        raise AgentError(f"version pin {text!r} must look like name@range, e.g. grep@^1.2")
    try:
        return name, VersionRange.parse(wanted)
    except ValueError as exc:
        raise AgentError(f"version pin {text!r}: {exc}") from exc


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class AgentStore:
    """Agent profiles in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def create(
        self,
        name: str,
        *,
        ceiling: PermissionLevel,
        role: Role = Role.AGENT,
        tools: Iterable[str] | None = None,
        pins: Iterable[str] = (),
        quota: Quota = NO_QUOTA,
    ) -> tuple[AgentProfile, str]:
        """A new profile and its token (returned once, never stored in the clear).

        Raises:
            AgentError: a bad name or pin, or the name is taken.
        """
        if not name or len(name) > 64 or not set(name) <= _NAME_CHARS:
            raise AgentError(
                f"agent name {name!r} must be 1-64 lowercase letters, digits, '_', '.' or '-'"
            )
        if name in RESERVED_NAMES or set(name) == {"."}:
            raise AgentError(f"agent name {name!r} is reserved (it names a route)")
        _check_quota(quota)
        pin_list = list(pins)
        for pin in pin_list:
            parse_pin(pin)
        token = new_token()
        record = AgentRecord(
            id=uuid.uuid4().hex,
            name=name,
            role=role.value,
            ceiling=ceiling.value,
            tools=None if tools is None else sorted(set(tools)),
            pins=pin_list,
            token_hash=hash_token(token),
            created_at=time.time(),
            rate_per_s=quota.rate_per_s,
            burst=quota.burst,
            max_in_flight=quota.max_in_flight,
            max_queued=quota.max_queued,
        )
        with Session(self.engine) as session:
            session.add(record)
            try:
                session.commit()
            except IntegrityError as exc:
                raise AgentError(f"an agent named {name!r} already exists") from exc
            session.refresh(record)
            return AgentProfile.from_record(record), token

    def authenticate(self, token: str) -> AgentProfile | None:
        """The profile a token belongs to; None for unknown or revoked tokens."""
        with Session(self.engine) as session:
            record = session.exec(
                select(AgentRecord).where(AgentRecord.token_hash == hash_token(token))
            ).first()
            if record is None or record.revoked:
                return None
            return AgentProfile.from_record(record)

    def is_active(self, agent_id: str) -> bool:
        """True while the agent with this id exists and is not revoked."""
        with Session(self.engine) as session:
            record = session.get(AgentRecord, agent_id)
            return record is not None and not record.revoked

    def by_id(self, agent_id: str) -> AgentProfile | None:
        """The active profile with this id (None when unknown or revoked)."""
        with Session(self.engine) as session:
            record = session.get(AgentRecord, agent_id)
            return None if record is None or record.revoked else AgentProfile.from_record(record)

    def names(self, agent_ids: Iterable[str]) -> dict[str, str]:
        """The name of each agent id known (revoked agents' included: history names them)."""
        wanted = set(agent_ids)
        if not wanted:
            return {}
        with Session(self.engine) as session:
            query = select(AgentRecord.id, AgentRecord.name).where(
                AgentRecord.id.in_(wanted)  # type: ignore[attr-defined]
            )
            return dict(session.exec(query).all())

    def get(self, name: str) -> AgentProfile | None:
        with Session(self.engine) as session:
            record = session.exec(select(AgentRecord).where(AgentRecord.name == name)).first()
            return None if record is None or record.revoked else AgentProfile.from_record(record)

    def list(self) -> list[AgentProfile]:
        """Every active profile, by name."""
        with Session(self.engine) as session:
            query = select(AgentRecord).where(AgentRecord.revoked == False).order_by("name")  # noqa: E712
            return [AgentProfile.from_record(record) for record in session.exec(query)]

    def revoke(self, name: str) -> bool:
        """Disable an agent's token for good; False when there is no such active agent."""
        with Session(self.engine) as session:
            record = session.exec(select(AgentRecord).where(AgentRecord.name == name)).first()
            if record is None or record.revoked:
                return False
            record.revoked = True
            # Free the name for a new profile; the row stays for the audit trail.
            record.name = f"{name}~revoked~{record.id}"
            session.add(record)
            session.commit()
            return True

    def set_quota(self, name: str, quota: Quota, *, reset: Iterable[str] = ()) -> AgentProfile:
        """Change an agent's quotas: each limit given (not None) replaces its own (0: no
        limit); the limits named in `reset` go back to the platform's defaults.

        Raises:
            AgentError: no such agent, or `reset` names no limit.
        """
        known = list(Quota().as_dict())
        unknown = [limit for limit in reset if limit not in known]
        if unknown:
            raise AgentError(f"no such quota: {', '.join(unknown)} (known: {', '.join(known)})")
        _check_quota(quota)
        with Session(self.engine) as session:
            record = session.exec(select(AgentRecord).where(AgentRecord.name == name)).first()
            if record is None or record.revoked:
                raise AgentError(f"no agent named {name!r}")
            for limit, value in quota.as_dict().items():
                if value is not None:
                    setattr(record, limit, value)
            for limit in reset:
                setattr(record, limit, None)
            session.add(record)
            session.commit()
            session.refresh(record)
            return AgentProfile.from_record(record)

    def rotate(self, name: str) -> str:
        """A new token for an existing agent; the old one stops working.

        Raises:
            AgentError: no such agent.
        """
        token = new_token()
        with Session(self.engine) as session:
            record = session.exec(select(AgentRecord).where(AgentRecord.name == name)).first()
            if record is None or record.revoked:
                raise AgentError(f"no agent named {name!r}")
            record.token_hash = hash_token(token)
            session.add(record)
            session.commit()
        return token


class TokenCache:
    """Recently seen tokens → profiles, so a call costs no database query."""

    def __init__(self, store: AgentStore, ttl_s: float = CACHE_TTL_S) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self._seen: dict[str, tuple[AgentProfile, float]] = {}

    def cached(self, token: str) -> AgentProfile | None:
        """The profile if this token was seen valid in the last `ttl_s` (no database query)."""
        hit = self._seen.get(hash_token(token))
        return hit[0] if hit is not None and hit[1] > time.monotonic() else None

    def authenticate(self, token: str) -> AgentProfile | None:
        """The token's profile, from the cache or the database; None when invalid."""
        profile = self.cached(token) or self.store.authenticate(token)
        key = hash_token(token)
        if profile is None:
            self._seen.pop(key, None)
        elif key not in self._seen or self._seen[key][1] <= time.monotonic():
            self._seen[key] = (profile, time.monotonic() + self.ttl_s)
        return profile

    def forget(self, name: str) -> None:
        """Drop cached entries of an agent (after a revoke in this process)."""
        self._seen = {k: v for k, v in self._seen.items() if v[0].name != name}


def unknown_entries_message(unknown: Iterable[str]) -> str:
    """Why a tool set naming `unknown` (see `ToolRegistry.unknown_entries`) is refused."""
    return f"the tool set names no registered tool or tag: {', '.join(unknown)}"
