"""Standing approval rules: "allow `git status` for agent X" without asking every time.

A rule names a tool and, optionally, an agent, a command and argument values. Commands are
compared as parsed words, never as raw strings: every simple command the call would run
must have exactly the rule's words, or begin with them when the rule ends in ``*``. So
``git status *`` covers ``git  status --short`` but not ``git status; rm -rf ~``, and
``rm -rf build`` covers that command only, not ``rm -rf build /``.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from sqlalchemy import JSON, Column
from sqlalchemy.engine import Engine
from sqlmodel import Field, Session, SQLModel, select

from toolrun.errors import SandboxViolation, ToolrunError
from toolrun.sandbox.commands import command_lines, simple_commands


class RuleError(ToolrunError):
    """A rule that cannot be stored: its command does not parse, or it matches nothing."""


class StandingRule(SQLModel, table=True):
    """Pre-approval of calls that match."""

    __tablename__ = "approval_rules"

    id: str = Field(primary_key=True)
    tool_name: str = Field(index=True)
    # The agent by id (a new agent given a revoked one's name inherits nothing); the name
    # is kept for people. None: any agent.
    agent_id: str | None = None
    agent_name: str | None = None
    command: str | None = None  # for tools with a `command` argument (bash)
    arguments: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    created_by: str
    created_at: float

    def matches(self, tool_name: str, agent_id: str | None, arguments: dict[str, Any]) -> bool:
        if tool_name != self.tool_name:
            return False
        if self.agent_id is not None and agent_id != self.agent_id:
            return False
        if self.arguments and any(
            arguments.get(key) != value for key, value in self.arguments.items()
        ):
            return False
        if self.command is None:
            return True
        given = arguments.get("command")
        return isinstance(given, str) and _command_covered(given, _words(self.command)[0])


def _words(source: str) -> list[list[str]]:
    """The parsed command lines of `source`.

    Raises:
        SandboxViolation: it does not parse.
    """
    return list(command_lines(simple_commands(source)))


def _command_covered(source: str, allowed: list[str]) -> bool:
    try:
        lines = _words(source)
    except SandboxViolation:
        return False
    if allowed[-1:] == ["*"]:
        prefix = allowed[:-1]
        return bool(lines) and all(line[: len(prefix)] == prefix for line in lines)
    return bool(lines) and all(line == allowed for line in lines)


class RuleBook:
    """Standing rules in the database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(
        self,
        tool_name: str,
        *,
        created_by: str,
        agent_id: str | None = None,
        agent_name: str | None = None,
        command: str | None = None,
        arguments: dict[str, Any] | None = None,
    ) -> StandingRule:
        """Store a rule.

        Raises:
            RuleError: the command does not parse into exactly one simple command.
        """
        if command is not None:
            try:
                lines = _words(command)
            except SandboxViolation as exc:
                raise RuleError(str(exc)) from exc
            if len(lines) != 1:
                raise RuleError(
                    f"a rule's command must be one simple command, got {len(lines)}: {command!r}"
                )
        rule = StandingRule(
            id=uuid.uuid4().hex[:12],
            tool_name=tool_name,
            agent_id=agent_id,
            agent_name=agent_name,
            command=command,
            arguments=arguments or None,
            created_by=created_by,
            created_at=time.time(),
        )
        with Session(self.engine) as session:
            session.add(rule)
            session.commit()
            session.refresh(rule)
            return rule

    def list(self) -> list[StandingRule]:
        with Session(self.engine) as session:
            return list(session.exec(select(StandingRule).order_by("created_at")))

    def remove(self, rule_id: str) -> bool:
        with Session(self.engine) as session:
            rule = session.get(StandingRule, rule_id)
            if rule is None:
                return False
            session.delete(rule)
            session.commit()
            return True

    def first_match(
        self, tool_name: str, agent_id: str | None, arguments: dict[str, Any]
    ) -> StandingRule | None:
        """The oldest rule that covers this call, if any."""
        with Session(self.engine) as session:
            rules = session.exec(
                select(StandingRule)
                .where(StandingRule.tool_name == tool_name)
                .order_by("created_at")
            )
            return next((r for r in rules if r.matches(tool_name, agent_id, arguments)), None)
