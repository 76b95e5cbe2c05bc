"""The API in-process (no broker reachable): registry routes, request checks, 503 not 500."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from tests.conftest import agent_token

from toolrun.api import create_app
from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role
from toolrun.tools.builtin import builtin_tools


def serve(settings: Settings, token: str | None = None) -> TestClient:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    return TestClient(create_app(settings), raise_server_exceptions=False, headers=headers)


@pytest.fixture
def client(workspace: Path, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        workspace=workspace,
        home=tmp_path / "home",
        redis_url="redis://127.0.0.1:1/0",
        max_body_bytes=2048,
    )
    with serve(settings, agent_token(settings)) as test_client:
        yield test_client


def test_lists_the_tools(client: TestClient) -> None:
    names = [tool["name"] for tool in client.get("/v1/tools").json()]

    assert names == sorted(tool.descriptor.name for tool in builtin_tools())


def test_one_tool_and_its_docs(client: TestClient) -> None:
    assert client.get("/v1/tools/read").json()["permission"] == "read_only"
    assert client.get("/v1/tools/read", params={"version": "1.0.0"}).status_code == 200
    docs = client.get("/v1/tools/grep/docs")
    assert docs.headers["content-type"].startswith("text/markdown")
    assert "## Parameters" in docs.text


@pytest.mark.parametrize(
    "path", ["/v1/tools/nope", "/v1/tools/read?version=9.9.9", "/v1/tools/nope/docs"]
)
def test_unknown_tools_are_404_with_the_available_names(client: TestClient, path: str) -> None:
    response = client.get(path)

    assert response.status_code == 404
    names = ", ".join(sorted(tool.descriptor.name for tool in builtin_tools()))
    assert f"available tools: {names}" in response.json()["detail"]


def test_malformed_json_is_400(client: TestClient) -> None:
    response = client.post(
        "/v1/calls", content=b"{nope", headers={"content-type": "application/json"}
    )

    assert response.status_code == 400
    assert response.json()["detail"].startswith("malformed JSON body")


def test_a_declared_oversized_body_is_413(client: TestClient) -> None:
    response = client.post(
        "/v1/calls", json={"tool_name": "read", "arguments": {"file_path": "x" * 5000}}
    )

    assert response.status_code == 413
    assert response.json() == {"detail": "request body is larger than 2048 bytes"}


def test_a_streamed_oversized_body_is_413(client: TestClient) -> None:
    chunks = (b"x" * 1024 for _ in range(5))  # no Content-Length: chunked

    response = client.post(
        "/v1/calls", content=chunks, headers={"content-type": "application/json"}
    )

    assert response.status_code == 413


def test_an_unreachable_broker_is_503_not_500(client: TestClient) -> None:
    response = client.post("/v1/calls", json={"tool_name": "read", "arguments": {"file_path": "a"}})

    assert response.status_code == 503
    assert response.json()["detail"].startswith("broker unavailable")


def test_health_reports_the_broker_down(client: TestClient) -> None:
    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unhealthy"
    assert body["redis"].startswith("unavailable")
    assert body["database"] == "ok"  # SQLite under TOOLRUN_HOME by default
    assert body["sandbox"] in {"cgroup", "sweep"}


def test_health_reports_the_database_down(workspace: Path, tmp_path: Path) -> None:
    settings = Settings(
        workspace=workspace,
        home=tmp_path,
        redis_url="redis://127.0.0.1:1/0",
        database_url="postgresql+psycopg://nobody@127.0.0.1:1/none",
    )
    with serve(settings) as client:
        response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["database"].startswith("unavailable: OperationalError")


def test_openapi_describes_the_routes(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]

    assert {
        "/v1/tools",
        "/v1/tools/{name}",
        "/v1/tools/{name}/docs",
        "/v1/calls",
        "/v1/calls/{call_id}",
        "/healthz",
    } <= set(paths)


def test_the_docs_pages_load_nothing_from_elsewhere(client: TestClient) -> None:
    for page in ("/docs", "/redoc"):
        html = client.get(page).text
        sources = re.findall(r'(?:src|href)="([^"]+)"', html) + re.findall(r"url: '([^']+)'", html)
        assert sources, page
        assert all(source.startswith("/") for source in sources), (page, sources)
        for source in sources:
            assert client.get(source).status_code == 200, source
    bundle = client.get("/docs-assets/swagger-ui-bundle.js")
    assert bundle.headers["content-type"].startswith("text/javascript")
    assert len(bundle.content) > 100_000
    assert client.get("/docs-assets/..%2Fcore.py").status_code == 404
    assert client.get("/docs-assets/core.py").status_code == 404
    home = client.get("/", follow_redirects=False)
    assert home.status_code == 307
    assert home.headers["location"] == "/docs"


PROTECTED = [
    ("GET", "/v1/calls"),
    ("GET", "/v1/tools"),
    ("GET", "/v1/tools/read"),
    ("GET", "/v1/tools/read/docs"),
    ("GET", "/v1/tools/read/versions"),
    ("POST", "/v1/tools"),
    ("DELETE", "/v1/tools/abc"),
    ("POST", "/v1/calls"),
    ("GET", "/v1/calls/abc"),
    ("POST", "/v1/calls/abc/approve"),
    ("POST", "/v1/calls/abc/deny"),
    ("GET", "/v1/approvals"),
    ("GET", "/v1/approvals/abc/preview"),
    ("GET", "/v1/approval-rules"),
    ("POST", "/v1/approval-rules"),
    ("DELETE", "/v1/approval-rules/abc"),
    ("GET", "/v1/agents"),
    ("POST", "/v1/agents"),
    ("GET", "/v1/agents/me"),
    ("GET", "/v1/agents/abc/warnings"),
    ("GET", "/v1/agents/admin"),
    ("PATCH", "/v1/agents/admin/quota"),
    ("DELETE", "/v1/agents/admin"),
    ("POST", "/v1/select"),
    ("GET", "/v1/recommendations"),
    ("POST", "/v1/calls/abc/feedback"),
    ("GET", "/v1/blacklist"),
    ("POST", "/v1/blacklist"),
    ("DELETE", "/v1/blacklist/read"),
    ("GET", "/v1/whitelist"),
    ("POST", "/v1/whitelist"),
    ("DELETE", "/v1/whitelist/abc"),
    ("GET", "/v1/subagents"),
    ("GET", "/v1/subagents/searcher"),
    ("PUT", "/v1/subagents/searcher"),
    ("DELETE", "/v1/subagents/searcher"),
    ("GET", "/v1/security-events"),
    ("GET", "/v1/history"),
    ("GET", "/v1/history/export"),
    ("GET", "/v1/stats"),
    ("GET", "/metrics"),
    ("POST", "/v1/dags"),
    ("GET", "/v1/dags"),
    ("GET", "/v1/dags/abc"),
    ("POST", "/v1/dags/abc/cancel"),
]


@pytest.mark.parametrize(("method", "path"), PROTECTED)
@pytest.mark.parametrize(
    "authorization", [None, "Bearer trk_forged", "Basic YWRtaW46YWRtaW4=", "Bearer "]
)
def test_every_route_needs_a_valid_bearer_token(
    client: TestClient, method: str, path: str, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    client.headers.pop("Authorization")

    response = client.request(method, path, headers=headers, json={})

    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == "Bearer"


def test_every_route_is_in_the_auth_test(client: TestClient) -> None:
    """A new route fails here until it is added to PROTECTED (or deliberately left open)."""
    paths = client.get("/openapi.json").json()["paths"]
    routes = [(m.upper(), p) for p, ops in paths.items() for m in ops if p != "/healthz"]

    assert len(routes) == len(PROTECTED), routes


def test_metrics_are_for_operators(workspace: Path, tmp_path: Path) -> None:
    settings = Settings(
        workspace=workspace, home=tmp_path / "home", redis_url="redis://127.0.0.1:1/0"
    )
    token = agent_token(settings, "bot", ceiling=PermissionLevel.READ_ONLY, role=Role.AGENT)
    operator = agent_token(settings, "ops", role=Role.OPERATOR)

    with serve(settings, token) as client:
        refused = client.get("/metrics")
        unavailable = client.get("/metrics", headers={"Authorization": f"Bearer {operator}"})

    assert refused.status_code == 403
    assert "needs the operator role" in refused.json()["detail"]
    assert unavailable.status_code == 503  # no broker here; tests/integration/test_metrics.py


@pytest.fixture
def versioned(workspace: Path, tmp_path: Path) -> Settings:
    return Settings(
        workspace=workspace,
        home=tmp_path / "home",
        redis_url="redis://127.0.0.1:1/0",
        tool_modules=["tests.api.versioned_tools"],
    )


def test_a_tools_versions_and_the_default(versioned: Settings) -> None:
    with serve(versioned, agent_token(versioned)) as client:
        response = client.get("/v1/tools/echo/versions")

    assert response.json() == {
        "name": "echo",
        "versions": ["1.0.0", "1.2.0", "1.10.1", "2.0.0-beta.1"],
        "default": "1.10.1",  # the newest stable release, by SemVer (not by text)
        "pinned": None,
    }


def test_a_pinned_agent_sees_its_pin_as_the_default(versioned: Settings) -> None:
    token = agent_token(versioned, name="pinned", pins=["echo@~1.2"])
    with serve(versioned, token) as client:
        body = client.get("/v1/tools/echo/versions").json()
        one = client.get("/v1/tools/echo", params={"version": "^1.0"}).json()

    assert (body["default"], body["pinned"]) == ("1.2.0", "~1.2")
    assert one["version"] == "1.10.1"


def test_versions_of_an_unknown_tool_are_404(versioned: Settings) -> None:
    with serve(versioned, agent_token(versioned)) as client:
        response = client.get("/v1/tools/nope/versions")

    assert response.status_code == 404
    assert "available tools:" in response.json()["detail"]


def test_plugin_uploads_have_their_own_size_limit(workspace: Path, tmp_path: Path) -> None:
    settings = Settings(
        workspace=workspace,
        home=tmp_path / "home",
        redis_url="redis://127.0.0.1:1/0",
        max_body_bytes=2048,
        max_plugin_bytes=8192,
    )
    descriptor = {"descriptor": "{}"}
    with serve(settings, agent_token(settings)) as client:
        fits = client.post("/v1/tools", files={"module": ("m.wasm", b"x" * 4000)}, data=descriptor)
        too_big = client.post(
            "/v1/tools", files={"module": ("m.wasm", b"x" * 9000)}, data=descriptor
        )

    assert fits.status_code == 422  # read and checked: an empty descriptor
    assert too_big.status_code == 413
    assert too_big.json() == {"detail": "request body is larger than 8192 bytes"}
