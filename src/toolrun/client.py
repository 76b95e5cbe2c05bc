"""Python SDK: `Client` and `AsyncClient` for the toolrun API."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx

from toolrun.errors import ToolrunError
from toolrun.tools.model import ToolDescriptor, ToolResult

DEFAULT_API = "http://127.0.0.1:8000"
# A little over the longest wait the caller asks for, so the server answers first.
_WAIT_SLACK_S = 10.0


class ApiError(ToolrunError):
    """The API refused a request (4xx) or could not serve it (5xx)."""

    def __init__(self, status_code: int, detail: str) -> None:
        super().__init__(f"{status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail


class ApiUnreachable(ToolrunError):
    """No answer from the API (not running, wrong URL, network)."""


def _submit(
    name: str,
    arguments: dict[str, Any] | None,
    wait: float,
    version: str | None,
    call_id: str | None,
) -> dict[str, Any]:
    """The request options of POST /v1/calls, shared by both clients."""
    body: dict[str, Any] = {"tool_name": name, "arguments": arguments or {}}
    if version is not None:
        body["version"] = version
    if call_id is not None:
        body["id"] = call_id
    return {"params": {"wait": wait}, "json": body, "timeout": wait + _WAIT_SLACK_S}


def _checked(response: httpx.Response) -> httpx.Response:
    if response.is_error:
        try:
            body = response.json()
        except ValueError:
            body = None
        detail = body.get("detail", response.text) if isinstance(body, dict) else response.text
        raise ApiError(response.status_code, str(detail))
    return response


class Client:
    """Blocking client."""

    def __init__(self, base_url: str = DEFAULT_API, *, timeout_s: float = 30.0) -> None:
        self._http = httpx.Client(base_url=base_url, timeout=timeout_s)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return _checked(self._http.request(method, path, **kwargs))
        except httpx.TransportError as exc:
            raise ApiUnreachable(
                f"cannot reach the toolrun API at {self._http.base_url}: {exc}"
            ) from exc

    def list_tools(self) -> list[ToolDescriptor]:
        return [ToolDescriptor.model_validate(d) for d in self._request("GET", "/v1/tools").json()]

    def get_tool(self, name: str, version: str | None = None) -> ToolDescriptor:
        params = {"version": version} if version else {}
        return ToolDescriptor.model_validate(
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
    ) -> ToolResult:
        """Submit a call; wait up to `wait` s for its result (else its queued/running state)."""
        response = self._request(
            "POST", "/v1/calls", **_submit(name, arguments, wait, version, call_id)
        )
        return ToolResult.model_validate(response.json())

    def get_call(self, call_id: str) -> ToolResult:
        return ToolResult.model_validate(
            self._request("GET", f"/v1/calls/{quote(call_id, safe='')}").json()
        )


class AsyncClient:
    """Asyncio client with the same methods as `Client`."""

    def __init__(self, base_url: str = DEFAULT_API, *, timeout_s: float = 30.0) -> None:
        self._http = httpx.AsyncClient(base_url=base_url, timeout=timeout_s)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return _checked(await self._http.request(method, path, **kwargs))
        except httpx.TransportError as exc:
            raise ApiUnreachable(
                f"cannot reach the toolrun API at {self._http.base_url}: {exc}"
            ) from exc

    async def list_tools(self) -> list[ToolDescriptor]:
        response = await self._request("GET", "/v1/tools")
        return [ToolDescriptor.model_validate(d) for d in response.json()]

    async def get_tool(self, name: str, version: str | None = None) -> ToolDescriptor:
        params = {"version": version} if version else {}
        response = await self._request("GET", f"/v1/tools/{quote(name, safe='')}", params=params)
        return ToolDescriptor.model_validate(response.json())

    async def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        wait: float = 30.0,
        version: str | None = None,
        call_id: str | None = None,
    ) -> ToolResult:
        """Submit a call; wait up to `wait` s for its result (else its queued/running state)."""
        response = await self._request(
            "POST", "/v1/calls", **_submit(name, arguments, wait, version, call_id)
        )
        return ToolResult.model_validate(response.json())

    async def get_call(self, call_id: str) -> ToolResult:
        response = await self._request("GET", f"/v1/calls/{quote(call_id, safe='')}")
        return ToolResult.model_validate(response.json())
