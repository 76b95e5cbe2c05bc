"""The envelope: what the lifecycle decided, as the worker reads it back."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from tests.envelopes import envelope

from toolrun.calls.envelope import Envelope
from toolrun.permissions.policy import Policy
from toolrun.tools.model import ToolCall


def test_an_envelope_survives_the_message_as_json() -> None:
    call = ToolCall(tool_name="grep", version="1.0.0", arguments={"pattern": "x"}, agent_id="a1")
    sent = envelope(
        call,
        approved_by="rule r1",
        arguments={"pattern": "x", "-i": False},
    )

    received = Envelope.model_validate(sent.model_dump(mode="json"))

    assert received == sent
    assert received.arguments == {"pattern": "x", "-i": False}  # the defaults travel along
    assert received.call.arguments == {"pattern": "x"}  # and what the agent sent, as sent


def test_only_an_unapproved_call_of_a_held_back_policy_needs_approval() -> None:
    call = ToolCall(tool_name="bash", arguments={"command": "rm -rf x"})
    safe = envelope(call)
    held = safe.model_copy(update={"policy": Policy.DANGEROUS})

    assert not safe.needs_approval
    assert held.needs_approval
    assert not held.model_copy(update={"approved_by": "ops"}).needs_approval


@pytest.mark.parametrize(
    "change",
    [
        {"extra": 1},  # a field the worker does not know
        {"time_limit_s": 0},
        {"policy": "maybe"},
        {"call": {"tool_name": "read", "version": "^1.0"}},  # a range: not resolved
        {"call": {"tool_name": "read"}},  # no version at all
    ],
)
def test_a_malformed_message_is_refused(change: dict[str, object]) -> None:
    payload = envelope(ToolCall(tool_name="read")).model_dump(mode="json") | change

    with pytest.raises(ValidationError):
        Envelope.model_validate(payload)
