"""Python SDK: `Client` and `AsyncClient` for the toolrun API.

Importing it loads neither httpx nor the pydantic models it returns: the first client
or result does (so `toolrun call --local`, which never talks HTTP, starts fast)."""

# ruff: noqa: PLC0415 - httpx, asyncio and the models are imported where they are used

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO
from urllib.parse import quote

from toolrun.errors import ToolrunError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    import httpx

    from toolrun.dag.plan import Plan
    from toolrun.interop.function_calls import ModelToolCall
    from toolrun.subagents.definition import SubAgent
    from toolrun.tools.model import ToolDescriptor, ToolResult

DEFAULT_API = "http://127.0.0.1:8000"
# A little over the longest wait the caller asks for, so the server answers first.
_WAIT_SLACK_S = 10.0
# A request answered 429 or 503 with Retry-After (over a quota, a full queue: nothing was
# done) is sent again after that long, this many times, waiting at most MAX_RETRY_WAIT_S.
RETRIES = 3
MAX_RETRY_WAIT_S = 30.0


class ApiError(ToolrunError):
    """The API refused a request (4xx) or could not serve it (5xx); `problems` lists each
    reason of a refused plan (their `detail` joins them)."""

    def __init__(
        self,
        status_code: int,
        detail: str,
        problems: list[str] | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(f"{status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail
        self.problems = problems or []
        self.retry_after_s = retry_after_s  # from Retry-After: when to try again


class ApiUnreachable(ToolrunError):
    """No answer from the API (not running, wrong URL, network)."""


def _submit(
    name: str,
    arguments: dict[str, Any] | None,
    wait: float,
    version: str | None,
    call_id: str | None,
    priority: str | None = None,
) -> dict[str, Any]:
    """The request options of POST /v1/calls, shared by both clients."""
    body: dict[str, Any] = {"tool_name": name, "arguments": arguments or {}}
    if version is not None:
        body["version"] = version
    if call_id is not None:
        body["id"] = call_id
    if priority is not None:
        body["priority"] = priority
    return {"params": {"wait": wait}, "json": body, "timeout": wait + _WAIT_SLACK_S}


def _select_body(
    task: str,
    context: dict[str, Any] | None,
    tools: list[str] | list[dict[str, Any]] | None,
    top_k: int,
    min_confidence: float | None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"task": task, "context": context or {}, "tools": tools, "top_k": top_k}
    if min_confidence is not None:
        body["min_confidence"] = min_confidence
    return body


@dataclass(frozen=True)
class _Callable:
    """The tools of an MCP export (those the agent may call: a tool it only sees cannot
    make names clash) by API-safe name, with their parameters."""

    names: dict[str, str]
    schemas: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, exported: list[dict[str, Any]]) -> _Callable:
        from toolrun.interop.formats import api_names

        names = api_names(str(tool["name"]) for tool in exported)
        return cls(names, {str(t["name"]): dict(t.get("inputSchema") or {}) for t in exported})

    def refused(self, call: ModelToolCall) -> str | None:
        """Why a model's call cannot be sent (unknown tool, bad arguments), or None."""
        if call.problem is not None:
            return f"call {call.name} not run: {call.problem}"
        if call.name not in self.names:
            return f"unknown tool {call.name!r}; known: {', '.join(sorted(self.names))}"
        return None

    def sent(self, call: ModelToolCall) -> tuple[str, dict[str, Any]]:
        """The tool a call names, and its arguments without strict mode's nulls."""
        from toolrun.interop.strict import without_nulls

        name = self.names[call.name]
        return name, without_nulls(call.arguments, self.schemas[name])


def _tools_params(format: str, strict: bool) -> dict[str, Any]:
    return {"format": format} | ({"strict": "true"} if strict else {})


def _call_path(call_id: str) -> str:
    return f"/v1/calls/{quote(call_id, safe='')}"


def _open_params(status: str | None, agent: str | None, limit: int) -> dict[str, Any]:
    """The query of GET /v1/calls."""
    return {"limit": limit} | {k: v for k, v in {"status": status, "agent": agent}.items() if v}


def _waiting(wait: float) -> dict[str, Any]:
    return {"params": {"wait": wait}, "timeout": wait + _WAIT_SLACK_S} if wait else {}


def _result(response: httpx.Response) -> ToolResult:
    from toolrun.tools.model import ToolResult

    return ToolResult.model_validate(response.json())


def _descriptor(data: Any) -> ToolDescriptor:
    from toolrun.tools.model import ToolDescriptor

    return ToolDescriptor.model_validate(data)


def _checked(response: httpx.Response) -> httpx.Response:
    if response.is_error:
        retry_after_s = _retry_after(response)
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise ApiError(response.status_code, response.text, retry_after_s=retry_after_s)
        problems = body.get("problems")
        listed = [str(p) for p in problems] if isinstance(problems, list) else None
        detail = str(body.get("detail", response.text))
        raise ApiError(response.status_code, detail, listed, retry_after_s)
    return response


def _retry_after(response: httpx.Response) -> float | None:
    """The wait a 429 or 503 asks for (Retry-After in seconds), else None."""
    if response.status_code not in (429, 503):
        return None
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None


def _retry_wait(response: httpx.Response, attempt: int, retries: int) -> float | None:
    """How long to wait before sending a request again, or None: answer as it is."""
    wait = _retry_after(response)
    if wait is None or attempt >= retries:
        return None
    return min(wait, MAX_RETRY_WAIT_S)


def _export_params(format: str, filters: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in {**filters, "format": format}.items() if v is not None}


def _stats_params(since: float | None, until: float | None, by: str) -> dict[str, Any]:
    return {k: v for k, v in {"since": since, "until": until, "by": by}.items() if v is not None}


def _plan_body(plan: dict[str, Any] | Plan, run_id: str | None) -> dict[str, Any]:
    """The body of POST /v1/dags."""
    data = plan if isinstance(plan, dict) else plan.model_dump(mode="json", exclude_none=True)
    return {"plan": data} | ({} if run_id is None else {"id": run_id})


def _dag_path(run_id: str) -> str:
    return f"/v1/dags/{quote(run_id, safe='')}"


def _dag_list_params(status: str | None, limit: int) -> dict[str, Any]:
    return {"limit": limit} | ({} if status is None else {"status": status})


class _DagDeadline:
    """When `wait_dag` gives up, and how long it sleeps before the next look."""

    def __init__(self, run_id: str, timeout: float | None, poll_s: float) -> None:
        self.run_id, self.timeout, self.poll_s = run_id, timeout, poll_s
        self.at = None if timeout is None else time.monotonic() + timeout

    def pause_s(self) -> float:
        """Seconds to sleep before polling again.

        Raises:
            TimeoutError: the deadline has passed, naming the run.
        """
        if self.at is None:
            return self.poll_s
        left = self.at - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"DAG run {self.run_id!r} still running after {self.timeout:g} s")
        return min(self.poll_s, left)


def _over(view: dict[str, Any]) -> bool:
    return view.get("status") != "running"


def _headers(token: str | None) -> dict[str, str]:
    return {} if token is None else {"Authorization": f"Bearer {token}"}


class Client:
    """Blocking client; `token` is the agent's bearer token (`toolrun agents create`).
    `retries`: how many times a request answered 429 or 503 with Retry-After is sent
    again, after the wait it asks for (at most MAX_RETRY_WAIT_S); 0: raise at once."""

    def __init__(
        self,
        base_url: str = DEFAULT_API,
        *,
        token: str | None = None,
        timeout_s: float = 30.0,
        retries: int = RETRIES,
    ) -> None:
        import httpx

        self._http = httpx.Client(base_url=base_url, timeout=timeout_s, headers=_headers(token))
        self.retries = retries

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        return str(self._http.base_url).rstrip("/")

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        import httpx

        attempt = 0
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                raise ApiUnreachable(
                    f"cannot reach the toolrun API at {self._http.base_url}: {exc}"
                ) from exc
            wait = _retry_wait(response, attempt, self.retries)
            if wait is None:
                return _checked(response)
            attempt += 1
            time.sleep(wait)

    def list_tools(self) -> list[ToolDescriptor]:
        return [_descriptor(d) for d in self._request("GET", "/v1/tools").json()]

    def export_tools(self, format: str = "openai", *, strict: bool = False) -> list[dict[str, Any]]:
        """The tools this agent may call in the shape an API takes: openai, anthropic or
        mcp; `strict`: OpenAI's strict mode where it can be (docs/interop.md)."""
        params = _tools_params(format, strict)
        return list(self._request("GET", "/v1/tools", params=params).json())

    def register_plugin(self, module: bytes, descriptor: dict[str, Any]) -> dict[str, Any]:
        """Admin: register a WebAssembly module with its descriptor (docs/plugins.md)."""
        files = {"module": ("module.wasm", module, "application/wasm")}
        data = {"descriptor": json.dumps(descriptor)}
        registered: dict[str, Any] = self._request(
            "POST", "/v1/tools", files=files, data=data
        ).json()
        return registered

    def remove_plugin(self, name: str, version: str | None = None) -> list[str]:
        """Admin: unregister a plugin version (or all); returns the versions removed."""
        params = {} if version is None else {"version": version}
        path = f"/v1/tools/{quote(name, safe='')}"
        removed: list[str] = self._request("DELETE", path, params=params).json()["removed"]
        return removed

    def get_tool(self, name: str, version: str | None = None) -> ToolDescriptor:
        params = {"version": version} if version else {}
        return _descriptor(
            self._request("GET", f"/v1/tools/{quote(name, safe='')}", params=params).json()
        )

    def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        wait: float = 30.0,
        version: str | None = None,
        call_id: str | None = None,
        priority: str | None = None,
    ) -> ToolResult:
        """Submit a call; wait up to `wait` s for its result (else its queued/running state).
        `priority`: "batch" for work that can wait (served after interactive calls)."""
        options = _submit(name, arguments, wait, version, call_id, priority)
        response = self._request("POST", "/v1/calls", **options)
        return _result(response)

    def get_call(self, call_id: str, *, wait: float = 0) -> ToolResult:
        """A call's state; with `wait`, waits up to that long for it to end."""
        response = self._request("GET", _call_path(call_id), **_waiting(wait))
        return _result(response)

    def calls(
        self, status: str | None = None, *, agent: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """The calls not ended — `status` queued, running or awaiting_approval, default
        all three — newest first, at most `limit`: an agent's own; an operator's, every
        agent's or `agent`'s (by name). The ended ones are in `history`."""
        params = _open_params(status, agent, limit)
        return list(self._request("GET", "/v1/calls", params=params).json())

    def whoami(self) -> dict[str, Any]:
        """The profile of this client's token."""
        return dict(self._request("GET", "/v1/agents/me").json())

    def approvals(
        self, status: str | None = "pending", *, limit: int = 100
    ) -> list[dict[str, Any]]:
        """Calls in the approval inbox, newest first, at most `limit` (operators)."""
        params: dict[str, Any] = (
            {"limit": limit} if status is None else {"status": status, "limit": limit}
        )
        return list(self._request("GET", "/v1/approvals", params=params).json())

    def approve(self, call_id: str, reason: str | None = None) -> ToolResult:
        """Run a parked call (operators)."""
        return self._decide(call_id, "approve", reason)

    def deny(self, call_id: str, reason: str | None = None) -> ToolResult:
        """End a parked call as denied (operators)."""
        return self._decide(call_id, "deny", reason)

    def _decide(self, call_id: str, verb: str, reason: str | None) -> ToolResult:
        response = self._request("POST", f"{_call_path(call_id)}/{verb}", json={"reason": reason})
        return _result(response)

    def approval_rules(self) -> list[dict[str, Any]]:
        return list(self._request("GET", "/v1/approval-rules").json())

    def add_approval_rule(
        self,
        tool_name: str,
        *,
        agent_name: str | None = None,
        command: str | None = None,
        arguments: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Pre-approve matching calls (operators)."""
        body = {
            "tool_name": tool_name,
            "agent_name": agent_name,
            "command": command,
            "arguments": arguments,
        }
        return dict(self._request("POST", "/v1/approval-rules", json=body).json())

    def remove_approval_rule(self, rule_id: str) -> None:
        self._request("DELETE", f"/v1/approval-rules/{quote(rule_id, safe='')}")

    def select(
        self,
        task: str,
        *,
        context: dict[str, Any] | None = None,
        tools: list[str] | list[dict[str, Any]] | None = None,
        top_k: int = 5,
        min_confidence: float | None = None,
    ) -> dict[str, Any]:
        """The tool for `task` with its arguments and the trace of the five steps; `tools`:
        registry names to choose among, or tools in the OpenAI function or BFCL format;
        `min_confidence`: what a tool needs to be chosen (the platform's default: 0.5)."""
        body = _select_body(task, context, tools, top_k, min_confidence)
        return dict(self._request("POST", "/v1/select", json=body).json())

    def recommendations(self, task: str, *, top_k: int = 5) -> dict[str, Any]:
        """Registry tools for `task` ranked with their history; blacklisted ones left out."""
        params = {"task": task, "top_k": top_k}
        return dict(self._request("GET", "/v1/recommendations", params=params).json())

    def feedback(self, call_id: str, rating: int, comment: str | None = None) -> None:
        """Rate a call that ended, 1 (useless) to 5 (exactly right)."""
        body = {"rating": rating, "comment": comment}
        self._request("POST", f"{_call_path(call_id)}/feedback", json=body)

    def run_tool_calls(self, response: dict[str, Any], *, wait: float = 60.0) -> list[Any]:
        """Run the tool calls in a model's response (OpenAI Chat Completions or Responses,
        or Anthropic Messages, as plain dicts) and return the messages that carry their
        results back: tool messages, function_call_output items, or one user message of
        tool_result blocks. A refused or failed call is reported to the model, not raised.

        Raises:
            NotAModelResponse: `response` is none of those shapes.
        """
        from toolrun.interop.function_calls import replies, result_text, tool_calls

        kind, calls = tool_calls(response)
        known = _Callable.of(self.export_tools("mcp") if calls else [])
        answered = []
        for call in calls:
            refused = known.refused(call)
            if refused is None:
                try:
                    text, error = result_text(self.call(*known.sent(call), wait=wait))
                except ApiError as exc:
                    text, error = f"refused ({exc.status_code}): {exc.detail}", True
            else:
                text, error = refused, True
            answered.append((call, text, error))
        return replies(kind, answered)

    def blacklist(self) -> list[dict[str, Any]]:
        return list(self._request("GET", "/v1/blacklist").json())

    def add_to_blacklist(
        self, tool_name: str, *, for_s: float | None = None, reason: str | None = None
    ) -> dict[str, Any]:
        """Operator: keep a tool out of recommendations (for `for_s`, or until lifted)."""
        body = {"tool_name": tool_name, "for_s": for_s, "reason": reason}
        return dict(self._request("POST", "/v1/blacklist", json=body).json())

    def lift(self, tool_name: str) -> None:
        """Operator: end a tool's blacklisting."""
        self._request("DELETE", f"/v1/blacklist/{quote(tool_name, safe='')}")

    def whitelist(self) -> list[dict[str, Any]]:
        return list(self._request("GET", "/v1/whitelist").json())

    def add_to_whitelist(self, tool_name: str, *, agent_name: str | None = None) -> dict[str, Any]:
        """Operator: rank a tool first when it matches (for one agent, or everyone)."""
        body = {"tool_name": tool_name, "agent_name": agent_name}
        return dict(self._request("POST", "/v1/whitelist", json=body).json())

    def remove_from_whitelist(self, mark_id: str) -> None:
        self._request("DELETE", f"/v1/whitelist/{quote(mark_id, safe='')}")

    def agents(self) -> list[dict[str, Any]]:
        """Admin: every active agent profile (never a token)."""
        return list(self._request("GET", "/v1/agents").json())

    def create_agent(
        self,
        name: str,
        *,
        ceiling: str,
        role: str = "agent",
        tools: Sequence[str] | None = None,
        pins: Sequence[str] = (),
        quota: dict[str, float | int] | None = None,
    ) -> dict[str, Any]:
        """Admin: a new agent; the answer's `token` is shown this once (`agent`: its
        profile). `tools`: tool names and ``tag:<tag>`` entries (None: every tool);
        `quota`: its own limits (rate_per_s, burst, max_in_flight, max_queued)."""
        body = {
            "name": name,
            "ceiling": ceiling,
            "role": role,
            "tools": None if tools is None else list(tools),
            "pins": list(pins),
            "quota": quota,
        }
        return dict(self._request("POST", "/v1/agents", json=body).json())

    def agent(self, name: str) -> dict[str, Any]:
        """Admin: one agent's profile, its quotas and what it uses of them."""
        return dict(self._request("GET", f"/v1/agents/{quote(name, safe='')}").json())

    def set_quota(
        self, name: str, limits: dict[str, float | int], *, reset: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Admin: change an agent's quotas (0: no limit); `reset`: limits given back to
        the platform's defaults. Returns the profile as `agent` does."""
        body = {**limits, "reset": list(reset)}
        path = f"/v1/agents/{quote(name, safe='')}/quota"
        return dict(self._request("PATCH", path, json=body).json())

    def revoke_agent(self, name: str) -> None:
        """Admin: revoke an agent's token for good."""
        self._request("DELETE", f"/v1/agents/{quote(name, safe='')}")

    def subagents(self) -> list[dict[str, Any]]:
        """Sub-agent definitions for the Task tool: registered ones and the workspace's."""
        return list(self._request("GET", "/v1/subagents").json())

    def get_subagent(self, name: str) -> SubAgent:
        """One sub-agent definition, its system prompt included."""
        from toolrun.subagents.definition import SubAgent

        found = self._request("GET", f"/v1/subagents/{quote(name, safe='')}").json()
        return SubAgent.model_validate(found)

    def register_subagent(self, definition: SubAgent) -> bool:
        """Admin: register (True) or replace (False) a sub-agent definition; read one from
        Markdown with `toolrun.subagents.definition.parse_markdown`."""
        path = f"/v1/subagents/{quote(definition.name, safe='')}"
        body = definition.model_dump(mode="json")
        return self._request("PUT", path, json=body).status_code == 201

    def remove_subagent(self, name: str) -> None:
        """Admin: unregister a sub-agent definition."""
        self._request("DELETE", f"/v1/subagents/{quote(name, safe='')}")

    def history(self, *, cursor: str | None = None, **filters: Any) -> dict[str, Any]:
        """One page of call history, newest first: filters tool, version, agent (name),
        status, since, until, limit; pass the answer's `next_cursor` for the next page."""
        params = {k: v for k, v in {**filters, "cursor": cursor}.items() if v is not None}
        return dict(self._request("GET", "/v1/history", params=params).json())

    def export_history(self, destination: BinaryIO, *, format: str = "json", **filters: Any) -> int:
        """Stream every matching row (filters as `history`) into `destination` as CSV or a
        JSON array; returns the bytes written."""
        import httpx

        params = _export_params(format, filters)
        try:
            with self._http.stream("GET", "/v1/history/export", params=params) as response:
                if response.is_error:
                    response.read()
                    _checked(response)
                written = 0
                for chunk in response.iter_bytes():
                    written += destination.write(chunk)
                return written
        except httpx.TransportError as exc:
            raise ApiUnreachable(f"export from {self._http.base_url} broke off: {exc}") from exc

    def stats(
        self, *, since: float | None = None, until: float | None = None, by: str = "tool"
    ) -> dict[str, Any]:
        """Per-tool statistics of the calls that ended in [since, until) (default: the last
        day), and suggestions for slow tools (operators)."""
        params = _stats_params(since, until, by)
        return dict(self._request("GET", "/v1/stats", params=params).json())

    def security_events(self, *, kind: str | None = None, limit: int = 100) -> list[dict[str, Any]]:
        """Refused calls, connections and requests, newest first (operators)."""
        params: dict[str, Any] = {"limit": limit} | ({"kind": kind} if kind else {})
        return list(self._request("GET", "/v1/security-events", params=params).json())

    def submit_plan(
        self, plan: dict[str, Any] | Plan, *, run_id: str | None = None
    ) -> dict[str, Any]:
        """Start a DAG run of `plan` (a `toolrun.dag.Plan` or its JSON form); returns the
        run's view. A refused plan raises ApiError (422) with each reason in `problems`."""
        return dict(self._request("POST", "/v1/dags", json=_plan_body(plan, run_id)).json())

    def get_dag(self, run_id: str) -> dict[str, Any]:
        """A DAG run's view: status, counts per state and each node."""
        return dict(self._request("GET", _dag_path(run_id)).json())

    def list_dags(self, *, status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """DAG runs, newest first, with counts per state but not their nodes."""
        params = _dag_list_params(status, limit)
        return list(self._request("GET", "/v1/dags", params=params).json()["runs"])

    def cancel_dag(self, run_id: str) -> dict[str, Any]:
        """Ask a DAG run to stop; it ends `cancelled` shortly after."""
        return dict(self._request("POST", f"{_dag_path(run_id)}/cancel").json())

    def wait_dag(
        self, run_id: str, *, timeout: float | None = None, poll_s: float = 0.25
    ) -> dict[str, Any]:
        """The run's view once it is over (status no longer `running`).

        Raises:
            TimeoutError: still running after `timeout` s.
        """
        deadline = _DagDeadline(run_id, timeout, poll_s)
        while not _over(view := self.get_dag(run_id)):
            time.sleep(deadline.pause_s())
        return view


class AsyncClient:
    """Asyncio client with the methods of `Client` that agents use: tools, calls,
    selection and feedback, statistics and DAG runs (operators' methods are sync only)."""

    def __init__(
        self,
        base_url: str = DEFAULT_API,
        *,
        token: str | None = None,
        timeout_s: float = 30.0,
        retries: int = RETRIES,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """`headers`: sent with every request too (e.g. W3C `traceparent`)."""
        import httpx

        self._http = httpx.AsyncClient(
            base_url=base_url, timeout=timeout_s, headers={**(headers or {}), **_headers(token)}
        )
        self.retries = retries

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        import asyncio

        import httpx

        attempt = 0
        while True:
            try:
                response = await self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                raise ApiUnreachable(
                    f"cannot reach the toolrun API at {self._http.base_url}: {exc}"
                ) from exc
            wait = _retry_wait(response, attempt, self.retries)
            if wait is None:
                return _checked(response)
            attempt += 1
            await asyncio.sleep(wait)

    async def list_tools(self) -> list[ToolDescriptor]:
        response = await self._request("GET", "/v1/tools")
        return [_descriptor(d) for d in response.json()]

    async def export_tools(
        self, format: str = "openai", *, strict: bool = False
    ) -> list[dict[str, Any]]:
        """As `Client.export_tools`."""
        params = _tools_params(format, strict)
        return list((await self._request("GET", "/v1/tools", params=params)).json())

    async def get_tool(self, name: str, version: str | None = None) -> ToolDescriptor:
        params = {"version": version} if version else {}
        response = await self._request("GET", f"/v1/tools/{quote(name, safe='')}", params=params)
        return _descriptor(response.json())

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        wait: float = 30.0,
        version: str | None = None,
        call_id: str | None = None,
        priority: str | None = None,
    ) -> ToolResult:
        """As `Client.call`."""
        options = _submit(name, arguments, wait, version, call_id, priority)
        response = await self._request("POST", "/v1/calls", **options)
        return _result(response)

    async def get_call(self, call_id: str, *, wait: float = 0) -> ToolResult:
        """A call's state; with `wait`, waits up to that long for it to end."""
        response = await self._request("GET", _call_path(call_id), **_waiting(wait))
        return _result(response)

    async def calls(
        self, status: str | None = None, *, agent: str | None = None, limit: int = 100
    ) -> list[dict[str, Any]]:
        """As `Client.calls`."""
        params = _open_params(status, agent, limit)
        return list((await self._request("GET", "/v1/calls", params=params)).json())

    async def select(
        self,
        task: str,
        *,
        context: dict[str, Any] | None = None,
        tools: list[str] | list[dict[str, Any]] | None = None,
        top_k: int = 5,
        min_confidence: float | None = None,
    ) -> dict[str, Any]:
        """The tool for `task`, as `Client.select`."""
        body = _select_body(task, context, tools, top_k, min_confidence)
        return dict((await self._request("POST", "/v1/select", json=body)).json())

    async def recommendations(self, task: str, *, top_k: int = 5) -> dict[str, Any]:
        """Registry tools for `task` with their history, as `Client.recommendations`."""
        params = {"task": task, "top_k": top_k}
        return dict((await self._request("GET", "/v1/recommendations", params=params)).json())

    async def feedback(self, call_id: str, rating: int, comment: str | None = None) -> None:
        """Rate a call that ended, as `Client.feedback`."""
        body = {"rating": rating, "comment": comment}
        await self._request("POST", f"{_call_path(call_id)}/feedback", json=body)

    async def run_tool_calls(self, response: dict[str, Any], *, wait: float = 60.0) -> list[Any]:
        """As `Client.run_tool_calls`, the calls run concurrently."""
        from toolrun.interop.function_calls import replies, result_text, tool_calls

        kind, calls = tool_calls(response)
        known = _Callable.of(await self.export_tools("mcp") if calls else [])

        async def answer(call: ModelToolCall) -> tuple[ModelToolCall, str, bool]:
            refused = known.refused(call)
            if refused is not None:
                return call, refused, True
            try:
                text, error = result_text(await self.call(*known.sent(call), wait=wait))
            except ApiError as exc:
                return call, f"refused ({exc.status_code}): {exc.detail}", True
            return call, text, error

        import asyncio

        return replies(kind, list(await asyncio.gather(*(answer(c) for c in calls))))

    async def stats(
        self, *, since: float | None = None, until: float | None = None, by: str = "tool"
    ) -> dict[str, Any]:
        """Per-tool statistics, as `Client.stats`."""
        response = await self._request("GET", "/v1/stats", params=_stats_params(since, until, by))
        return dict(response.json())

    async def submit_plan(
        self, plan: dict[str, Any] | Plan, *, run_id: str | None = None
    ) -> dict[str, Any]:
        """Start a DAG run, as `Client.submit_plan`."""
        response = await self._request("POST", "/v1/dags", json=_plan_body(plan, run_id))
        return dict(response.json())

    async def get_dag(self, run_id: str) -> dict[str, Any]:
        return dict((await self._request("GET", _dag_path(run_id))).json())

    async def cancel_dag(self, run_id: str) -> dict[str, Any]:
        return dict((await self._request("POST", f"{_dag_path(run_id)}/cancel")).json())

    async def wait_dag(
        self, run_id: str, *, timeout: float | None = None, poll_s: float = 0.25
    ) -> dict[str, Any]:
        """The run's view once it is over, as `Client.wait_dag`."""
        import asyncio

        deadline = _DagDeadline(run_id, timeout, poll_s)
        while not _over(view := await self.get_dag(run_id)):
            await asyncio.sleep(deadline.pause_s())
        return view
