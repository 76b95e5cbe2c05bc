"""toolrun as an MCP server (the official `mcp` SDK's low-level server): tools/list gives
the tools the agent may call, with their schemas and annotations; tools/call runs them
through the platform's API (as that agent) or in this process (`--local`).

A call that waits for approval is reported as a tool error naming the call, unless the
client can be asked (elicitation): then the user is asked whether to keep waiting for an
operator (API) or to run it (local: the user is this machine's operator). On 2026-07-28
connections the question goes out as an `input_required` result and the call resumes
when the client retries; on older ones as an elicitation/create request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import re
import secrets
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio
import jsonschema
import mcp_types as types
from jsonschema.protocols import Validator
from mcp import MCPError
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from referencing.exceptions import Unresolvable

from toolrun import __version__
from toolrun.client import RETRIES, ApiError, ApiUnreachable, AsyncClient
from toolrun.config import Settings
from toolrun.errors import SandboxViolation
from toolrun.interop.formats import ExportFormat, export
from toolrun.interop.function_calls import result_text
from toolrun.local import run_local
from toolrun.permissions.approvals import ApprovalRequest, AutoApprover, Decision
from toolrun.sandbox.proxy import Refusal
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import validator_for

log = logging.getLogger(__name__)
APPROVAL_WAIT_S = 120.0  # how long an accepted "keep waiting" waits for the operator
_ASK_KEY = "toolrun_approval"
_ANSWERS = {"decline": "declined", "cancel": "cancelled", "accept": "accepted"}
_QUESTION = {
    "type": "object",
    "properties": {"go_ahead": {"type": "boolean", "title": "Go ahead", "default": True}},
    "required": ["go_ahead"],
}

Context = ServerRequestContext[Any, Any]


class Backend(Protocol):
    """Where calls run: the API (as an agent) or this process."""

    async def tools(self, ctx: Context) -> list[dict[str, Any]]:
        """The tools/list entries (MCP shape) of the tools the caller may call."""
        ...

    async def call(self, ctx: Context, name: str, arguments: dict[str, Any]) -> Outcome:
        """Run a call; its outcome says whether it waits for approval."""
        ...

    async def go_ahead(self, ctx: Context, pending: Pending) -> ToolResult:
        """The user said yes to a call that needed approval: wait for it, or run it."""
        ...


@dataclass(frozen=True)
class Pending:
    """A call that needs approval: why (the tool error when the user cannot be asked),
    what to ask the user, and what to resume."""

    why: str
    question: str
    state: dict[str, Any]  # kept by the client between the question and the retry


@dataclass(frozen=True)
class Outcome:
    result: ToolResult | None = None
    pending: Pending | None = None


def tool_result(result: ToolResult, output: Validator | None) -> types.CallToolResult:
    """A toolrun result as MCP content: the output's text, structured content where the
    tool has an output schema (`output` checks it); failures and waits are tool errors.

    MCP wants the structured content of a tool with an output schema to conform to it, so
    an output that does not is a tool error (its text kept) rather than a broken result.
    """
    text, error = result_text(result)
    if output is None or error:
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)], is_error=error
        )
    mismatch = _mismatch(output, result.output)
    if mismatch is not None:
        return tool_error(
            f"the output does not match the tool's returns schema ({mismatch}): {text}"
        )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=result.output
    )


def _mismatch(output: Validator, value: Any) -> str | None:
    """Where `value` breaks the output schema (the most relevant problem), or None."""
    try:
        error = jsonschema.exceptions.best_match(output.iter_errors(value))
    except Unresolvable as exc:  # a $ref the schema's author left pointing nowhere
        return f"the schema cannot be used: {exc}"
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def tool_error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


@dataclass
class McpFrontEnd:
    """The handlers of the MCP server over a backend."""

    backend: Backend
    _output_schemas: dict[str, Validator | None] = field(default_factory=dict)
    # Signs the state a 2026-07-28 client carries between a question and its retry, so
    # it cannot resume a call it was not asked about.
    _key: bytes = field(default_factory=lambda: secrets.token_bytes(32))

    def _sealed(self, state: dict[str, Any]) -> str:
        text = json.dumps(state, sort_keys=True)
        return f"{hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()}.{text}"

    def _unsealed(self, sealed: str) -> dict[str, Any] | None:
        signature, _, text = sealed.partition(".")
        expected = hmac.new(self._key, text.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(signature, expected):
            return None
        state = json.loads(text)
        return state if isinstance(state, dict) else None

    def server(self) -> Server[Any]:
        return Server(
            "toolrun",
            version=__version__,
            instructions="toolrun runs these tools under its permissions, approvals, "
            "sandbox and history.",
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )

    async def list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = await self.backend.tools(ctx)
        self._output_schemas = {
            tool["name"]: validator_for(schema) if (schema := tool.get("outputSchema")) else None
            for tool in listed
        }
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in listed])

    async def call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name not in self._output_schemas:  # a client that did not list them
            try:
                await self.list_tools(ctx, None)
            except MCPError as exc:
                return tool_error(exc.message)
        if params.request_state is not None:  # the client answers our question
            return await self._resumed(ctx, params)
        outcome = await self.backend.call(ctx, params.name, params.arguments or {})
        if outcome.pending is None:
            assert outcome.result is not None  # noqa: S101 - an outcome has one of them
            return self._converted(params.name, outcome.result)
        return await self._ask(ctx, params.name, outcome.pending)

    def _converted(self, name: str, result: ToolResult) -> types.CallToolResult:
        return tool_result(result, self._output_schemas.get(name))

    async def _ask(
        self, ctx: Context, name: str, pending: Pending
    ) -> types.CallToolResult | types.InputRequiredResult:
        capabilities = ctx.session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return tool_error(pending.why)
        question = types.ElicitRequestFormParams(
            message=f"{pending.why} {pending.question}", requested_schema=_QUESTION
        )
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return types.InputRequiredResult(
                input_requests={_ASK_KEY: types.ElicitRequest(params=question)},
                request_state=self._sealed(pending.state),
            )
        answer = await ctx.session.elicit_form(
            question.message, question.requested_schema, related_request_id=ctx.request_id
        )
        return await self._answered(ctx, name, pending, answer)

    async def _resumed(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        state = self._unsealed(params.request_state or "")
        answer = (params.input_responses or {}).get(_ASK_KEY)
        if state is None or not isinstance(answer, types.ElicitResult):
            return tool_error("the call's request_state is not the one toolrun sent")
        return await self._answered(ctx, params.name, Pending("", "", state), answer)

    async def _answered(
        self, ctx: Context, name: str, pending: Pending, answer: types.ElicitResult
    ) -> types.CallToolResult:
        if answer.action != "accept":
            return tool_error(f"not run: the user {_ANSWERS[answer.action]} the question")
        if not (answer.content or {}).get("go_ahead"):
            return tool_error("not run: the user said no")
        return self._converted(name, await self.backend.go_ahead(ctx, pending))


class ApiBackend:
    """Calls through the API, as the agent whose token the MCP client sent (HTTP:
    `Authorization: Bearer`) or the server's own (TOOLRUN_TOKEN, or the embedded
    platform's admin token). A call refused over a quota or for a full queue is sent
    again after its Retry-After, `retries` times, before it is reported."""

    def __init__(
        self, base_url: str, token: str | None, wait_s: float = 60.0, retries: int = RETRIES
    ) -> None:
        self.base_url = base_url
        self.token = token
        self.wait_s = wait_s
        self.retries = retries  # how often a call refused with Retry-After is sent again

    def _client(self, ctx: Context) -> AsyncClient:
        return AsyncClient(
            self.base_url,
            token=_bearer(ctx) or self.token,
            timeout_s=self.wait_s + 30,
            retries=self.retries,
            headers=_trace_context(ctx),
        )

    async def tools(self, ctx: Context) -> list[dict[str, Any]]:
        """The tools the agent may call, from the API's MCP export.

        Raises:
            MCPError: the API is unreachable or refused (the message says which and why).
        """
        try:
            async with self._client(ctx) as client:
                return await client.export_tools(ExportFormat.MCP)
        except (ApiError, ApiUnreachable) as exc:
            raise MCPError(types.INTERNAL_ERROR, _unlisted(self.base_url, exc)) from exc

    async def call(self, ctx: Context, name: str, arguments: dict[str, Any]) -> Outcome:
        async with self._client(ctx) as client:
            try:
                result = await client.call(name, arguments, wait=self.wait_s)
            except (ApiError, ApiUnreachable) as exc:
                return Outcome(_refused(name, exc, self.retries))
        if result.status is not ToolStatus.AWAITING_APPROVAL:
            return Outcome(result)
        why = (
            f"toolrun call {result.call_id} ({name}) waits for an operator's approval: "
            f"{result.error or ''} (approve with `toolrun approvals approve {result.call_id}` "
            f"or at {self.base_url}/ui/approvals)."
        )
        question = f"Keep waiting for up to {APPROVAL_WAIT_S:g} s?"
        return Outcome(pending=Pending(why, question, {"call_id": result.call_id}))

    async def go_ahead(self, ctx: Context, pending: Pending) -> ToolResult:
        call_id = str(pending.state.get("call_id", ""))
        async with self._client(ctx) as client:
            try:
                return await client.get_call(call_id, wait=APPROVAL_WAIT_S)
            except (ApiError, ApiUnreachable) as exc:
                return _refused(call_id, exc, self.retries, submitted=False)


class LocalBackend:
    """Calls in this process (like `toolrun call --local`): every registry tool; a call
    that needs confirmation is asked of the user (elicitation), or refused, unless
    `assume_yes` approved confirm calls in advance."""

    def __init__(
        self, settings: Settings, registry: ToolRegistry, workspace: Any, assume_yes: bool
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.workspace = workspace
        self.assume_yes = assume_yes

    async def tools(self, ctx: Context) -> list[dict[str, Any]]:
        return export([tool.descriptor for tool in self.registry.list()], ExportFormat.MCP)

    async def call(self, ctx: Context, name: str, arguments: dict[str, Any]) -> Outcome:
        asked = _Recording(AutoApprover() if self.assume_yes else None)
        result = await self._run(ToolCall(tool_name=name, arguments=arguments), asked)
        if asked.request is None:
            return Outcome(result)
        request = asked.request
        why = (
            f"{request.tool_name} (risk {request.risk}, policy {request.policy}) needs "
            f"confirmation: {request.warning}. Arguments: {json.dumps(request.arguments)}."
        )
        state = {"name": name, "arguments": arguments}
        return Outcome(pending=Pending(why, "Run it?", state))

    async def go_ahead(self, ctx: Context, pending: Pending) -> ToolResult:
        name, arguments = pending.state.get("name"), pending.state.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ValueError("not a call toolrun asked about")
        call = ToolCall(tool_name=name, arguments=arguments)
        # The user approved this very call: confirm and dangerous policies both pass.
        return await self._run(call, _Recording(AutoApprover(dangerous=True)))

    async def _run(self, call: ToolCall, approver: _Recording) -> ToolResult:
        def refused(refusal: Refusal) -> None:
            log.warning("network: %s:%s refused (%s)", refusal.host, refusal.port, refusal.reason)

        def run() -> ToolResult:
            try:
                return run_local(
                    self.settings,
                    self.registry,
                    call,
                    workspace=self.workspace,
                    approver=approver,
                    on_refused=refused,
                )
            except SandboxViolation as exc:
                return ToolResult(
                    call_id=call.id,
                    tool_name=call.tool_name,
                    status=ToolStatus.BLOCKED,
                    error=str(exc),
                )

        return await anyio.to_thread.run_sync(run)


@dataclass
class _Recording:
    """Approves as `inner` does (none: denies) and keeps the request it denied."""

    inner: AutoApprover | None
    request: ApprovalRequest | None = None

    def decide(self, request: ApprovalRequest) -> Decision:
        decision = Decision(approved=False, reason="needs confirmation")
        if self.inner is not None:
            decision = self.inner.decide(request)
        if not decision.approved:
            self.request = request
        return decision


# W3C Trace Context, as MCP clients send it in `_meta`: a header's value must have its
# form (anything else would be refused by the HTTP client, or be a header injection).
TRACE_FORMS = {
    "traceparent": re.compile(r"[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}"),
    "tracestate": re.compile(r"[\x20-\x7e]{1,512}"),
}


def _trace_context(ctx: Context) -> dict[str, str]:
    """The W3C trace context the MCP client sent in the request's `_meta`, passed on to
    the API as headers (toolrun's spans of the call become children of the client's);
    a value not of its form is left out, and a tracestate without a traceparent."""
    meta = ctx.meta or {}
    found = {
        key: value
        for key, form in TRACE_FORMS.items()
        if isinstance(value := meta.get(key), str) and form.fullmatch(value)
    }
    return found if "traceparent" in found else {}


def _bearer(ctx: Context) -> str | None:
    """The token of an HTTP request's `Authorization: Bearer` header, if any."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    value = headers.get("authorization", "") if headers is not None else ""
    scheme, _, token = value.partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _unlisted(base_url: str, exc: ApiError | ApiUnreachable) -> str:
    """Why the tools could not be listed, naming the API (and its answer's status)."""
    if isinstance(exc, ApiUnreachable):
        return f"toolrun cannot list its tools: {exc}"
    return (
        f"toolrun cannot list its tools: the API at {base_url} refused "
        f"({exc.status_code}): {exc.detail}"
    )


def _refused(
    name: str, exc: ApiError | ApiUnreachable, retries: int, *, submitted: bool = True
) -> ToolResult:
    """A request the API did not serve, as a tool error. One still refused with
    Retry-After after `retries` retries says when to try again; its detail names the
    quota (429) or the full queue (503). `submitted`: the request sent the call (so it
    did not run), not a look at one sent before."""
    if isinstance(exc, ApiUnreachable):
        status, error = ToolStatus.ERROR, str(exc)
    else:
        status = ToolStatus.BLOCKED if exc.status_code in (401, 403) else ToolStatus.ERROR
        error = f"refused ({exc.status_code}): {exc.detail}"
        if exc.retry_after_s is not None:
            after_s = max(1, math.ceil(exc.retry_after_s))
            tries = "once" if retries == 0 else f"{retries + 1} times"
            unrun = "Nothing was run; t" if submitted else "T"
            error = (
                f"refused ({exc.status_code}) {tries}: {exc.detail}. "
                f"{unrun}ry again in {after_s} s."
            )
    return ToolResult(call_id="-", tool_name=name, status=status, error=error)
