"""A new call queued in one Redis round trip: its agent's quotas and its queue's bound
(`calls.quotas`, for a call an agent sent itself), then its record (`CallStore.create`),
then its place in line — its agent's list and a pump on a shared queue, its agent's open
calls on a machine's (`calls.fairness`). One script, one atomic step: a call refused by a
quota leaves no record and no place (only the refusal's count), a call whose id is taken
takes no place in line, and calls sent together cannot pass a count quota between the
check and the queueing. Each step is the same Lua its own module runs alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import redis

from toolrun.calls.fairness import LUA_OPEN, LUA_PUMP, LUA_STEPS, Step, decoded, joined
from toolrun.calls.lua import LuaScript
from toolrun.calls.quotas import LUA_CHECK
from toolrun.calls.store import LUA_CREATE

# Three steps as `fairness.joined` gives them: the quota check (no keys: the call is not
# metered), the record's creation, the call's place in line (add: a pump that adds it to
# its agent's list, or open).
# Returns {'refused', quota, retry in ms, first}, {'taken'} (the id), or {'queued', the
# ids handed out (their deliveries put on the broker)...}.
_QUEUE = (
    LUA_CHECK
    + LUA_CREATE
    + LUA_PUMP
    + LUA_OPEN
    + LUA_STEPS
    + """
local check, record, place = unpack(steps(3))
if #check.keys > 0 then
    local refused = check_quota(check.keys, check.args)
    if refused[1] ~= 0 then
        return {'refused', refused[1], refused[2], refused[3]}
    end
end
if create(record.keys, record.args) == 0 then
    return {'taken'}
end
local placing = ({add = pump, open = open})[place.name]
return {'queued', unpack(placing(place.keys, place.args))}
"""
)
_PLACES = frozenset({"add", "open"})


@dataclass(frozen=True)
class Queued:
    """How queueing went: `refused` (the quota check's answer, for `quotas.refusal_of`),
    else `created` (False: the id is taken) and the ids `handed_out` (put on the broker)."""

    refused: list[Any] | None = None
    created: bool = False
    handed_out: list[str] = field(default_factory=list)


class Queueing:
    """Runs the three steps of queueing a new call as one script."""

    def __init__(self, client: redis.Redis) -> None:
        self._queue = LuaScript(client, _QUEUE)

    def queue(self, check: Step | None, create: Step, place: Step) -> Queued:
        """`check`: `QuotaGate.check_step` (None: not metered); `create`:
        `CallStore.create_step`; `place`: `FairQueues.add_step` or `open_step`."""
        steps = [("check_quota", check), ("create", create)]
        for function, step in steps:
            if step is not None and step.function != function:
                raise ValueError(f"expected a {function} step, not {step.function}")
        if place.function not in _PLACES:
            raise ValueError("a call is placed by a pump that adds it (add_step), or by open")
        script_keys, script_args = joined(check or Step("check_quota", []), create, place)
        answer: Any = self._queue(keys=script_keys, args=script_args)
        said = decoded(answer[:1])[0]
        if said == "refused":
            return Queued(refused=list(answer[1:]))
        if said == "taken":
            return Queued()
        return Queued(created=True, handed_out=decoded(answer[1:]))
