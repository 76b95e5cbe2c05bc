"""http_fetch: GET a URL on an allowlisted host, with size and time limits.

httpx is imported by a fetch, not with the registry."""

# ruff: noqa: PLC0415 - see the module docstring

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from toolrun.config import Settings
from toolrun.errors import NetworkRefused, ToolExecutionError, ToolTimeout
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.sandbox.network import NetworkPolicy
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolDescriptor, ToolExample

if TYPE_CHECKING:
    import httpx

DEFAULT_MAX_BYTES = 1024 * 1024
MAX_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 5
MAX_TIMEOUT_S = 60.0

DESCRIPTOR = ToolDescriptor.builtin(
    name="http_fetch",
    version="1.0.0",
    description=(
        "Fetch a URL with GET and return the status, headers and body as text. Only hosts on "
        "the network allowlist (TOOLRUN_NETWORK_ALLOWLIST) can be reached, redirects "
        "included; the body is cut at `max_bytes` and the whole fetch at `timeout`."
    ),
    parameters={
        "type": "object",
        "properties": {
            "url": {"type": "string", "minLength": 1, "description": "http:// or https:// URL."},
            "max_bytes": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_BYTES,
                "default": DEFAULT_MAX_BYTES,
                "description": "Most body bytes to keep; the rest is not downloaded.",
            },
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT_S,
                "default": 10,
                "description": "Seconds for the whole fetch.",
            },
        },
        "required": ["url"],
        "additionalProperties": False,
    },
    returns={
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The final URL, after redirects."},
            "status_code": {"type": "integer"},
            "content_type": {"type": ["string", "null"]},
            "content": {"type": "string", "description": "The body, decoded as text."},
            "bytes": {"type": "integer"},
            "truncated": {"type": "boolean"},
        },
    },
    examples=[
        ToolExample(
            description="Read a package's JSON metadata",
            arguments={"url": "https://pypi.org/pypi/httpx/json"},
        ),
        ToolExample(
            description="Get the first 10 kB of a page",
            arguments={"url": "https://docs.python.org/3/", "max_bytes": 10000},
        ),
        ToolExample(
            description="A local service, with a short timeout",
            arguments={"url": "http://127.0.0.1:8080/status", "timeout": 2},
        ),
        ToolExample(description="Download a web page", arguments={"url": "https://example.com/"}),
        ToolExample(
            description="Get JSON from an HTTP API",
            arguments={"url": "https://api.example.com/v1/items"},
        ),
    ],
    notes=[
        "A host off the network allowlist ends the call as blocked and is written to the "
        "security log; an empty allowlist (the default) allows no host at all.",
        "A status of 400 or more is returned as a result, not an error: the body often says why.",
        "The body is decoded with the charset the server declares (else UTF-8), leniently.",
    ],
    permission=PermissionLevel.READ_ONLY,
    repeat_safe=True,  # it only reads
    risk=Risk.LOW,
    tags=["network", "http", "web"],
    category="network",
    time_limit_s=MAX_TIMEOUT_S + 5,
)


class HttpFetchTool(Tool):
    descriptor = DESCRIPTOR
    starts_processes = False

    def time_limit_s(self, arguments: dict[str, Any], settings: Settings) -> float:
        return float(arguments.get("timeout", 10)) + 5

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        import httpx

        policy = NetworkPolicy(tuple(ctx.settings.network_allowlist))
        url, timeout = arguments["url"], float(arguments["timeout"])
        deadline = time.monotonic() + timeout
        with httpx.Client(trust_env=False, follow_redirects=False) as client:
            for _ in range(MAX_REDIRECTS + 1):
                _check(url, policy)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ToolTimeout(f"fetch took longer than {timeout:g} s")
                try:
                    with client.stream("GET", url, timeout=left) as response:
                        if response.is_redirect and "location" in response.headers:
                            url = urljoin(url, response.headers["location"])
                            continue
                        body, truncated = _read(response, arguments["max_bytes"], deadline)
                        return ToolOutput(output=_shape(response, body, truncated))
                except httpx.TimeoutException as exc:
                    raise ToolTimeout(f"fetch took longer than {timeout:g} s") from exc
                except httpx.HTTPError as exc:
                    raise ToolExecutionError(f"fetch of {url} failed: {exc}") from exc
        raise ToolExecutionError(f"more than {MAX_REDIRECTS} redirects")


def _check(url: str, policy: NetworkPolicy) -> None:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ToolExecutionError(f"not an http(s) URL: {url!r}")
    if not policy.allows(parts.hostname):
        raise NetworkRefused(
            f"host not in network allowlist: {parts.hostname}", target=parts.hostname
        )


def _read(response: httpx.Response, max_bytes: int, deadline: float) -> tuple[bytes, bool]:
    import httpx

    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > max_bytes:
            return bytes(body[:max_bytes]), True
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("deadline passed while reading the body")
    return bytes(body), False


def _shape(response: httpx.Response, body: bytes, truncated: bool) -> dict[str, Any]:
    text = body.decode(response.charset_encoding or "utf-8", errors="replace")
    return {
        "url": str(response.url),
        "status_code": response.status_code,
        "content_type": response.headers.get("content-type"),
        "content": text,
        "bytes": len(body),
        "truncated": truncated,
    }
