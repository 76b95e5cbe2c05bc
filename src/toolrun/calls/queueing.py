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

from toolrun.calls.fairness import LUA_OPEN, LUA_PART, LUA_PUMP, Step, decoded
from toolrun.calls.quotas import LUA_CHECK
from toolrun.calls.store import LUA_CREATE

# ARGV[1..4]: how many KEYS and ARGV the quota check takes (none: the call is not metered),
# how many the record's creation takes; ARGV[5]: the function that places the call
# (pump or open); from ARGV[6] on, the steps' ARGV in that order, as KEYS are.
# Returns {'refused', quota, retry in ms, first}, {'taken'} (the id), or {'queued', the
# envelopes handed out for the broker...}.
_QUEUE = (
    LUA_CHECK
    + LUA_CREATE
    + LUA_PUMP
    + LUA_OPEN
    + LUA_PART
    + """
local check_keys, check_args = tonumber(ARGV[1]), tonumber(ARGV[2])
local create_keys, create_args = tonumber(ARGV[3]), tonumber(ARGV[4])
local k, a = 1, 6
if check_keys > 0 then
    local refused = check_quota(part(KEYS, k, check_keys), part(ARGV, a, check_args))
    if refused[1] ~= 0 then
        return {'refused', refused[1], refused[2], refused[3]}
    end
end
k, a = k + check_keys, a + check_args
if create(part(KEYS, k, create_keys), part(ARGV, a, create_args)) == 0 then
    return {'taken'}
end
k, a = k + create_keys, a + create_args
local place = ({pump = pump, open = open})[ARGV[5]]
local handed_out = place(part(KEYS, k, #KEYS - k + 1), part(ARGV, a, #ARGV - a + 1))
return {'queued', unpack(handed_out)}
"""
)
_PLACES = frozenset({"pump", "open"})


@dataclass(frozen=True)
class Queued:
    """How queueing went: `refused` (the quota check's answer, for `quotas.refusal_of`),
    else `created` (False: the id is taken) and the envelopes `handed_out` for the broker."""

    refused: list[Any] | None = None
    created: bool = False
    handed_out: list[str] = field(default_factory=list)


class Queueing:
    """Runs the three steps of queueing a new call as one script."""

    def __init__(self, client: redis.Redis) -> None:
        self._queue = client.register_script(_QUEUE)

    def queue(self, check: Step | None, create: Step, place: Step) -> Queued:
        """`check`: `QuotaGate.check_step` (None: not metered); `create`:
        `CallStore.create_step`; `place`: `FairQueues.add_step` or `open_step`."""
        steps = [("check_quota", check), ("create", create)]
        for function, step in steps:
            if step is not None and step.function != function:
                raise ValueError(f"expected a {function} step, not {step.function}")
        if place.function not in _PLACES or (place.function == "pump" and len(place.args) < 7):
            raise ValueError("a call is placed by a pump that adds it (add_step), or by open")
        quota = check or Step("check_quota", [])
        answer: Any = self._queue(
            keys=[*quota.keys, *create.keys, *place.keys],
            args=[
                len(quota.keys),
                len(quota.args),
                len(create.keys),
                len(create.args),
                place.function,
                *quota.args,
                *create.args,
                *place.args,
            ],
        )
        said = decoded(answer[:1])[0]
        if said == "refused":
            return Queued(refused=list(answer[1:]))
        if said == "taken":
            return Queued()
        return Queued(created=True, handed_out=decoded(answer[1:]))
