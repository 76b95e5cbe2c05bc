"""Tool selection over HTTP: select a tool for a task (over the registry or a supplied
list), recommendations from history, feedback on calls, the whitelist and blacklist."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Path, Query
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from toolrun.api.auth import Agent, Operator
from toolrun.api.schemas import CALL_ID_PATTERN
from toolrun.api.state import ApiState, get_state
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.roles import Role
from toolrun.selection.cards import CardError, ToolCard
from toolrun.selection.judge import DEFAULT_CONFIDENCE
from toolrun.selection.pipeline import Selection, Selector
from toolrun.selection.preferences import MarkKind, ToolMark
from toolrun.selection.semantic import optional_encoder

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder

router = APIRouter(tags=["selection"])
State = Annotated[ApiState, Depends(get_state)]
MAX_TOOLS = 5000
_CACHED_SELECTORS = 16
_selectors: OrderedDict[tuple[str, ...], Selector] = OrderedDict()


class SelectRequest(BaseModel):
    """A task to find a tool for."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1, max_length=10_000)
    context: dict[str, Any] = Field(
        default_factory=dict, description="Argument values by parameter name."
    )
    tools: list[str] | list[dict[str, Any]] | None = Field(
        None,
        max_length=MAX_TOOLS,
        description="Registry tool names to choose among, or tools in the OpenAI function "
        "or BFCL format; default: every registry tool the agent may call.",
    )
    top_k: int = Field(5, ge=1, le=50)
    min_confidence: float = Field(
        DEFAULT_CONFIDENCE,
        gt=0,
        lt=1,
        description="The confidence a tool needs to be chosen (step 4's judge; a costly "
        "tool needs more); below it, no suitable tool.",
    )


class SelectionView(BaseModel):
    """The ranked candidates, the chosen tool (null: no suitable tool), its arguments and
    their validation, and what each of the five steps found."""

    task: str
    candidates: list[dict[str, Any]]
    chosen: str | None
    reason: str
    arguments: dict[str, Any] | None
    valid: bool
    missing: list[str]
    errors: list[str]
    trace: dict[str, Any]
    elapsed_ms: float
    guessed: list[str] = Field(
        default_factory=list,
        description="Required arguments guessed by meaning (the embedding model), to check "
        "before a call: while any is, the answer is not valid.",
    )
    history: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="What history says of each candidate."
    )

    @classmethod
    def of(cls, selection: Selection, history: dict[str, dict[str, Any]]) -> SelectionView:
        return cls(**selection.as_dict(), history=history)


@router.post("/v1/select", responses={422: {"description": "A bad task or tool list"}})
async def select(body: SelectRequest, state: State, agent: Agent) -> SelectionView:
    """Pick the tool for a task, fill its arguments, and show why (five steps)."""
    supplied = [tool for tool in body.tools or [] if isinstance(tool, dict)]
    if supplied:
        cards = _parsed(supplied)
        selection = await run_in_threadpool(
            lambda: Selector(cards, _encoder(state)).select(
                body.task,
                context=body.context,
                top_k=body.top_k,
                model=state.selection_model,
                min_confidence=body.min_confidence,
            )
        )
        return SelectionView.of(selection, {})
    names = None if body.tools is None else [t for t in body.tools if isinstance(t, str)]
    return await _over_registry(
        state, agent, body.task, body.context, body.top_k, names, body.min_confidence
    )


@router.get("/v1/recommendations")
async def recommendations(
    state: State,
    agent: Agent,
    task: Annotated[str, Query(min_length=1, max_length=10_000)],
    top_k: Annotated[int, Query(ge=1, le=50)] = 5,
) -> SelectionView:
    """The registry tools for a task, ranked with their history (success rate, time,
    feedback); blacklisted tools left out, whitelisted ones first."""
    return await _over_registry(state, agent, task, {}, top_k, None)


async def _over_registry(
    state: ApiState,
    agent: AgentProfile,
    task: str,
    context: dict[str, Any],
    top_k: int,
    names: list[str] | None,
    min_confidence: float = DEFAULT_CONFIDENCE,
) -> SelectionView:
    allowed = [t.descriptor for t in state.registry.list() if agent.refusal(t.descriptor) is None]
    newest = {d.name: d for d in allowed}
    if names is not None:
        unknown = sorted(set(names) - set(newest))
        if unknown:
            raise HTTPException(422, f"unknown tools: {', '.join(unknown)}")
        newest = {name: newest[name] for name in names}
    selector = _selector(tuple(sorted(d.tool_id for d in newest.values())), newest, state)
    preferences = state.preferences
    excluded = await run_in_threadpool(preferences.blacklist, newest)
    records = await run_in_threadpool(preferences.records, newest)
    whitelist = await run_in_threadpool(preferences.whitelisted, agent.id)
    selection = await run_in_threadpool(
        lambda: selector.select(
            task,
            context=context,
            top_k=top_k,
            history=records,
            whitelist=whitelist,
            excluded={b.tool_name for b in excluded},
            model=state.selection_model,
            min_confidence=min_confidence,
        )
    )
    shown = {c.name for c in selection.candidates}
    history = {
        name: {"success_rate": r.success_rate, "p50_ms": r.p50_ms, "rating": r.rating}
        for name, r in records.items()
        if name in shown
    }
    return SelectionView.of(selection, history)


def _encoder(state: ApiState) -> Encoder | None:
    """The embedding model selection weighs meaning with, if installed and not off."""
    return optional_encoder(state.settings.embedding_model)


def _selector(key: tuple[str, ...], descriptors: dict[str, Any], state: ApiState) -> Selector:
    """A selector over these tool versions (kept: its index is built once)."""
    found = _selectors.get(key)
    if found is None:
        found = Selector([ToolCard.of(d) for d in descriptors.values()], _encoder(state))
        _selectors[key] = found
        while len(_selectors) > _CACHED_SELECTORS:
            _selectors.popitem(last=False)
    _selectors.move_to_end(key)
    return found


def _parsed(tools: list[dict[str, Any]]) -> list[ToolCard]:
    try:
        return ToolCard.parse_list(tools)
    except CardError as exc:
        raise HTTPException(422, str(exc)) from exc


class FeedbackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rating: int = Field(ge=1, le=5, description="1 (useless) to 5 (exactly right).")
    comment: str | None = Field(None, max_length=2000)


@router.post(
    "/v1/calls/{call_id}/feedback",
    status_code=204,
    responses={404: {"description": "No such call of this agent"}},
)
async def feedback(
    call_id: Annotated[str, Path(pattern=CALL_ID_PATTERN)],
    body: FeedbackRequest,
    state: State,
    agent: Agent,
) -> None:
    """Rate a call that ended (its agent, or an operator); a second rating replaces it.

    The call is found in the history, or — just ended, before its worker's batch of
    history rows lands — in the call store."""
    ended = await _ended_call(state, call_id)
    operator = agent.role.includes(Role.OPERATOR)
    if ended is None or not (operator or ended[1] == agent.id):
        raise HTTPException(404, f"no ended call with id {call_id!r}")
    await run_in_threadpool(
        state.preferences.add_feedback, call_id, ended[0], agent.id, body.rating, body.comment
    )


async def _ended_call(state: ApiState, call_id: str) -> tuple[str, str | None] | None:
    """The tool and agent of an ended call, or None."""
    row = await run_in_threadpool(state.history.get, call_id)
    if row is not None:
        return row.tool_name, row.agent_id
    result = await state.store.get(call_id)
    if result is None or not result.final:
        return None
    return result.tool_name, result.metadata.get("agent_id")


class BlacklistRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool_name: str = Field(min_length=1, max_length=64)
    for_s: float | None = Field(None, gt=0, description="How long; default: until lifted.")
    reason: str | None = Field(None, max_length=500)


class BlacklistView(BaseModel):
    tool_name: str
    reason: str
    until: float | None


@router.get("/v1/blacklist")
async def blacklist(state: State, agent: Agent) -> list[BlacklistView]:
    """Tools excluded from recommendations now: set by an operator, or failing."""
    found = await run_in_threadpool(state.preferences.blacklist, None)
    return [BlacklistView(tool_name=b.tool_name, reason=b.reason, until=b.until) for b in found]


@router.post("/v1/blacklist", status_code=201, responses={404: {"description": "No such tool"}})
async def add_to_blacklist(body: BlacklistRequest, state: State, operator: Operator) -> ToolMark:
    """Exclude a tool from recommendations (for `for_s` seconds, or until lifted)."""
    _known(state, body.tool_name)
    until = None if body.for_s is None else time.time() + body.for_s
    return await run_in_threadpool(
        lambda: state.preferences.mark(
            MarkKind.BLACKLIST, body.tool_name, by=operator.name, until=until, reason=body.reason
        )
    )


@router.delete(
    "/v1/blacklist/{tool_name}", status_code=204, responses={404: {"description": "Not on it"}}
)
async def lift(
    tool_name: Annotated[str, Path(max_length=64)], state: State, operator: Operator
) -> None:
    """Lift a blacklisting (set, or after failures): the tool is recommended again."""
    listed = await run_in_threadpool(state.preferences.blacklist, [tool_name])
    if not listed:
        raise HTTPException(404, f"{tool_name} is not blacklisted")
    await run_in_threadpool(
        lambda: state.preferences.mark(MarkKind.LIFT, tool_name, by=operator.name)
    )


class WhitelistRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool_name: str = Field(min_length=1, max_length=64)
    agent_name: str | None = Field(None, max_length=64, description="Default: every agent.")


@router.get("/v1/whitelist")
async def whitelist(state: State, agent: Agent) -> list[ToolMark]:
    """Tools that rank first when they match a task, for everyone or one agent: an
    operator sees every entry, another agent those for everyone and its own."""
    if agent.role.includes(Role.OPERATOR):
        return await run_in_threadpool(state.preferences.whitelist)
    return await run_in_threadpool(state.preferences.whitelist_for, agent.id)


@router.post("/v1/whitelist", status_code=201, responses={404: {"description": "Unknown"}})
async def add_to_whitelist(body: WhitelistRequest, state: State, operator: Operator) -> ToolMark:
    _known(state, body.tool_name)
    agent_id = None
    if body.agent_name is not None:
        profile = await run_in_threadpool(state.agents.get, body.agent_name)
        if profile is None:
            raise HTTPException(404, f"no agent named {body.agent_name!r}")
        agent_id = profile.id
    return await run_in_threadpool(
        lambda: state.preferences.mark(
            MarkKind.WHITELIST, body.tool_name, by=operator.name, agent_id=agent_id
        )
    )


@router.delete("/v1/whitelist/{mark_id}", status_code=204, responses={404: {}})
async def remove_from_whitelist(
    mark_id: Annotated[str, Path(max_length=64)], state: State, operator: Operator
) -> None:
    if not await run_in_threadpool(state.preferences.unmark, mark_id):
        raise HTTPException(404, f"no whitelist entry with id {mark_id!r}")


def _known(state: ApiState, tool_name: str) -> None:
    if state.registry.get(tool_name) is None:
        raise HTTPException(404, state.registry.missing(tool_name))
