"""What history and operators say about tools, for selection's step 4: feedback on calls,
the whitelist (operator-set tools that rank above the algorithm's choice, for everyone or
one agent), and the blacklist (tools excluded from recommendations: set by an operator,
or a tool whose last N calls all failed, until a cool-down passes or an operator lifts it).
"""

from __future__ import annotations

import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import Text, func
from sqlalchemy.engine import Engine
from sqlmodel import Column, Field, Session, SQLModel, col, select

from toolrun.history import CallRecord
from toolrun.history.stats import HistoryStats, ToolStats
from toolrun.selection.pipeline import Record

FAILED = ("error", "timeout")
STATS_WINDOW_S = 7 * 24 * 3600
WEEK_STATS_TTL_S = 30.0
FAILURE_RUN_LIMIT = 1000  # failures in a row looked at for a blacklisting


class Feedback(SQLModel, table=True):
    """A rating of one call by the agent that made it (or an operator)."""

    __tablename__ = "call_feedback"

    call_id: str = Field(primary_key=True)
    tool_name: str = Field(index=True)
    agent_id: str | None = None
    rating: int
    comment: str | None = Field(default=None, sa_column=Column(Text))
    created_at: float


class MarkKind(StrEnum):
    WHITELIST = "whitelist"
    BLACKLIST = "blacklist"
    LIFT = "lift"  # ends a blacklisting (set, or after failures) of a tool until then


class ToolMark(SQLModel, table=True):
    """An operator's whitelist or blacklist entry, or the lifting of a blacklisting."""

    __tablename__ = "tool_marks"

    id: str = Field(primary_key=True)
    kind: str = Field(index=True)
    tool_name: str = Field(index=True)
    agent_id: str | None = None  # whitelist: one agent's (None: everyone's)
    until: float | None = None  # blacklist: when it ends (None: when lifted)
    reason: str | None = None
    created_by: str | None = None
    created_at: float


@dataclass(frozen=True)
class Blacklisted:
    """Why a tool is excluded, and until when (None: until an operator lifts it)."""

    tool_name: str
    reason: str
    until: float | None


class Preferences:
    """Feedback, lists and history statistics in the database."""

    def __init__(
        self,
        engine: Engine,
        *,
        failures: int,
        cooldown_s: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.engine = engine
        self.failures = failures
        self.cooldown_s = cooldown_s
        self.now = clock
        self._week: tuple[float, dict[str, ToolStats]] | None = None  # when, per tool

    # Feedback.

    def add_feedback(
        self, call_id: str, tool_name: str, agent_id: str | None, rating: int, comment: str | None
    ) -> None:
        """Store (or replace) the rating of a call."""
        with Session(self.engine) as session:
            session.merge(
                Feedback(
                    call_id=call_id,
                    tool_name=tool_name,
                    agent_id=agent_id,
                    rating=rating,
                    comment=comment,
                    created_at=self.now(),
                )
            )
            session.commit()

    def ratings(self) -> dict[str, tuple[float, int]]:
        """Mean rating and count of every rated tool."""
        query = select(Feedback.tool_name, func.avg(Feedback.rating), func.count()).group_by(
            Feedback.tool_name
        )
        with Session(self.engine) as session:
            return {name: (float(mean), int(count)) for name, mean, count in session.exec(query)}

    # Lists.

    def mark(
        self,
        kind: MarkKind,
        tool_name: str,
        *,
        by: str | None,
        agent_id: str | None = None,
        until: float | None = None,
        reason: str | None = None,
    ) -> ToolMark:
        entry = ToolMark(
            id=uuid.uuid4().hex[:12],
            kind=kind.value,
            tool_name=tool_name,
            agent_id=agent_id,
            until=until,
            reason=reason,
            created_by=by,
            created_at=self.now(),
        )
        with Session(self.engine) as session:
            session.add(entry)
            session.commit()
            session.refresh(entry)
        return entry

    def unmark(self, mark_id: str) -> bool:
        """Remove a whitelist entry; False when there is none with that id."""
        with Session(self.engine) as session:
            entry = session.get(ToolMark, mark_id)
            if entry is None or entry.kind != MarkKind.WHITELIST:
                return False
            session.delete(entry)
            session.commit()
            return True

    def whitelist(self) -> list[ToolMark]:
        return self._marks(MarkKind.WHITELIST)

    def whitelist_for(self, agent_id: str | None) -> list[ToolMark]:
        """The whitelist entries for everyone and for this agent."""
        return [m for m in self.whitelist() if m.agent_id in (None, agent_id)]

    def whitelisted(self, agent_id: str | None) -> set[str]:
        """The tools whitelisted for everyone or for this agent."""
        return {m.tool_name for m in self.whitelist_for(agent_id)}

    def blacklist(self, tools: Iterable[str] | None = None) -> list[Blacklisted]:
        """The tools excluded now (of `tools`, default: every tool with a call or mark)."""
        now = self.now()
        lifted: dict[str, float] = defaultdict(float)
        for lift in self._marks(MarkKind.LIFT):
            lifted[lift.tool_name] = max(lifted[lift.tool_name], lift.created_at)
        found: dict[str, Blacklisted] = {}
        for entry in self._marks(MarkKind.BLACKLIST):
            active = entry.until is None or entry.until > now
            if active and entry.created_at > lifted[entry.tool_name]:
                why = f"set by {entry.created_by}" + (f": {entry.reason}" if entry.reason else "")
                found[entry.tool_name] = Blacklisted(entry.tool_name, why, entry.until)
        names = set(tools) if tools is not None else self._called_tools()
        for name in sorted(names - set(found)):
            until = self._failing_until(name, lifted[name])
            if until is not None and until > now:
                found[name] = Blacklisted(name, f"its last {self.failures} calls failed", until)
        return sorted(found.values(), key=lambda b: b.tool_name)

    def records(self, tools: Iterable[str]) -> dict[str, Record]:
        """What history says of each tool: success rate and p50 time over the last week,
        mean rating. Tools without calls or ratings are left out."""
        wanted = set(tools)
        stats = self._week_stats()
        ratings = self.ratings()
        found = {}
        for name in wanted & (set(stats) | set(ratings)):
            ran = stats.get(name)
            rated = ratings.get(name)
            found[name] = Record(
                success_rate=1.0 if ran is None or not ran.calls else 1 - ran.failure_rate,
                p50_ms=None if ran is None else ran.p50_ms,
                rating=None if rated is None else rated[0],
            )
        return found

    def _week_stats(self) -> dict[str, ToolStats]:
        """Per-tool statistics of the last week, computed at most every WEEK_STATS_TTL_S
        (about 90 ms over 200,000 calls on SQLite; a week's rates move slowly)."""
        now = self.now()
        if self._week is None or now - self._week[0] >= WEEK_STATS_TTL_S:
            window = HistoryStats(self.engine).tools(now - STATS_WINDOW_S, now + 1)
            self._week = (now, {s.tool: s for s in window})
        return self._week[1]

    def _marks(self, kind: MarkKind) -> list[ToolMark]:
        with Session(self.engine) as session:
            query = select(ToolMark).where(ToolMark.kind == kind.value)
            return list(session.exec(query.order_by(col(ToolMark.created_at))))

    def _called_tools(self) -> set[str]:
        with Session(self.engine) as session:
            return set(session.exec(select(CallRecord.tool_name).distinct()))

    def _failing_until(self, tool_name: str, after: float) -> float | None:
        """When the blacklisting for the tool's latest run of failures (after `after`, a
        lift) ends: N failures in a row start it, each later one extends it; once a
        cool-down has passed, failures are counted afresh."""
        tool = col(CallRecord.tool_name) == tool_name
        with Session(self.engine) as session:
            succeeded = session.exec(
                select(func.max(CallRecord.finished_at))
                .where(tool)
                .where(col(CallRecord.status) == "success")
                .where(col(CallRecord.finished_at) > after)
            ).one()
            since = max(after, float(succeeded or 0.0))
            newest_first = session.exec(
                select(CallRecord.finished_at)
                .where(tool)
                .where(col(CallRecord.finished_at) > since)
                .where(col(CallRecord.status).in_(FAILED))
                .order_by(col(CallRecord.finished_at).desc())
                .limit(FAILURE_RUN_LIMIT)
            ).all()
        run = [float(finished_at or 0.0) for finished_at in newest_first]
        count, until = 0, None
        for ended_at in reversed(run):
            if until is not None and ended_at > until:
                count, until = 0, None  # served its cool-down: count afresh
            count += 1
            if count >= self.failures:
                until = ended_at + self.cooldown_s
        return until
