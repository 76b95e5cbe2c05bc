"""Plugins through the API with real workers: register, list, call, new version, pinned
call, remove; refused uploads; limits on a worker that keeps serving."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
import wasmtime

from tests.envelopes import envelope, put_on_broker
from tests.integration.platform import Platform, wait_for
from tests.plugins.conftest import EXAMPLES, build_examples
from tests.scripted_model import ScriptedModel, answer, tool_calls
from toolrun.embedded import terminate
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.model import ToolCall


@pytest.fixture(scope="module")
def modules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return build_examples(tmp_path_factory.mktemp("built"))


def descriptor(example: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((EXAMPLES / example / f"{example}.json").read_text())
    return {**data, **changes}


def register(api: httpx.Client, module: bytes, described: dict[str, Any]) -> httpx.Response:
    files = {"module": ("plugin.wasm", module, "application/wasm")}
    return api.post("/v1/tools", files=files, data={"descriptor": json.dumps(described)})


def call(api: httpx.Client, tool: str, arguments: dict[str, Any], **body: Any) -> dict[str, Any]:
    response = api.post(
        "/v1/calls", params={"wait": 30}, json={"tool_name": tool, "arguments": arguments, **body}
    )
    assert response.status_code in (200, 404), response.text
    result: dict[str, Any] = response.json()
    return result


def test_register_call_version_pin_and_remove(
    platform: Platform, api: httpx.Client, modules: dict[str, bytes]
) -> None:
    name = f"wc_{uuid.uuid4().hex[:8]}"
    first = register(api, modules["wordcount"], descriptor("wordcount", name=name))
    assert first.status_code == 201, first.text
    assert name in [tool["name"] for tool in api.get("/v1/tools").json()]

    result = call(api, name, {"text": "one two three"})
    assert result["status"] == "success", result
    assert result["output"] == {"words": 3, "lines": 1, "chars": 13}

    newer = descriptor("wordcount", name=name, version="1.1.0", description="Counts, again.")
    assert register(api, modules["wordcount"], newer).status_code == 201
    versions = api.get(f"/v1/tools/{name}/versions").json()
    assert (versions["versions"], versions["default"]) == (["1.0.0", "1.1.0"], "1.1.0")
    latest = call(api, name, {"text": "x"})
    assert latest["tool_version"] == "1.1.0", latest["error"]
    assert call(api, name, {"text": "x"}, version="1.0.0")["tool_version"] == "1.0.0"
    assert call(api, name, {"text": "x"}, version="~1.0.0")["tool_version"] == "1.0.0"

    removed = api.delete(f"/v1/tools/{name}", params={"version": "1.1.0"})
    assert removed.json() == {"name": name, "removed": ["1.1.0"]}
    assert api.get(f"/v1/tools/{name}/versions").json()["versions"] == ["1.0.0"]
    assert api.delete(f"/v1/tools/{name}").json()["removed"] == ["1.0.0"]
    assert name not in [tool["name"] for tool in api.get("/v1/tools").json()]
    gone = api.post("/v1/calls", json={"tool_name": name, "arguments": {"text": "x"}})
    assert gone.status_code == 404
    assert api.delete(f"/v1/tools/{name}").status_code == 404


def wat(text: str) -> bytes:
    return bytes(wasmtime.wat2wasm(text))


@pytest.mark.parametrize(
    ("module", "changes", "status", "message"),
    [
        (b"MZ not wasm", {}, 422, "not a WebAssembly module"),
        (wat('(module (func (export "main")))'), {}, 422, "does not export _start"),
        (
            wat('(module (import "env" "f" (func)) (func (export "_start")))'),
            {},
            422,
            "the module imports env.f",
        ),
        (None, {"examples": []}, 422, "at least 3 examples are required"),
        (None, {"version": "one"}, 422, "version"),
        (None, {"workspace": "everything"}, 422, "workspace must be none, read or write"),
        (None, {"name": "read"}, 409, "read is a built-in tool"),
    ],
    ids=[
        "not-wasm",
        "no-start",
        "foreign-import",
        "few-examples",
        "bad-version",
        "bad-access",
        "built-in-name",
    ],
)
def test_bad_uploads_are_refused_and_nothing_is_stored(
    api: httpx.Client,
    modules: dict[str, bytes],
    module: bytes | None,
    changes: dict[str, Any],
    status: int,
    message: str,
) -> None:
    name = changes.pop("name", f"bad_{uuid.uuid4().hex[:8]}")
    response = register(
        api, module or modules["wordcount"], descriptor("wordcount", name=name, **changes)
    )

    assert response.status_code == status, response.text
    assert message in response.json()["detail"]
    if name != "read":
        assert api.get(f"/v1/tools/{name}").status_code == 404


def test_only_admins_register_and_a_version_registers_once(
    platform: Platform, api: httpx.Client, modules: dict[str, bytes]
) -> None:
    name = f"once_{uuid.uuid4().hex[:8]}"
    token = platform.agent(f"op-{uuid.uuid4().hex[:8]}", PermissionLevel.ADMIN)
    with httpx.Client(
        base_url=platform.base_url, headers={"Authorization": f"Bearer {token}"}
    ) as agent:
        assert (
            register(agent, modules["wordcount"], descriptor("wordcount", name=name)).status_code
            == 403
        )
        assert agent.delete("/v1/tools/read").status_code == 403

    assert (
        register(api, modules["wordcount"], descriptor("wordcount", name=name)).status_code == 201
    )
    again = register(api, modules["linefilter"], descriptor("wordcount", name=name))
    assert again.status_code == 409
    assert "already registered" in again.json()["detail"]
    api.delete(f"/v1/tools/{name}")


def test_a_looping_plugin_times_out_and_the_worker_keeps_serving(
    api: httpx.Client, modules: dict[str, bytes]
) -> None:
    name = f"loop_{uuid.uuid4().hex[:8]}"
    loop = wat('(module (memory (export "memory") 1) (func (export "_start") (loop br 0)))')
    described = descriptor(
        "wordcount",
        name=name,
        time_limit_s=0.5,
        parameters={"type": "object"},
        examples=[{"description": f"e{n}", "arguments": {}} for n in range(3)],
    )
    assert register(api, loop, described).status_code == 201

    result = call(api, name, {})
    after = call(api, "read", {"file_path": "hello.txt"})

    assert result["status"] == "timeout", result
    assert "time limit exceeded" in result["error"] or "CPU limit exceeded" in result["error"]
    assert after["status"] == "success"
    api.delete(f"/v1/tools/{name}")


def test_the_cli_registers_and_removes(
    platform: Platform, modules: dict[str, bytes], tmp_path: Path
) -> None:
    name = f"cli_{uuid.uuid4().hex[:8]}"
    (tmp_path / "p.wasm").write_bytes(modules["linefilter"])
    (tmp_path / "p.json").write_text(json.dumps(descriptor("linefilter", name=name)))

    registered = platform.cli(
        "plugins", "register", str(tmp_path / "p.wasm"), "--descriptor", str(tmp_path / "p.json")
    )
    bad = platform.cli(
        "plugins",
        "register",
        str(tmp_path / "missing.wasm"),
        "--descriptor",
        str(tmp_path / "p.json"),
    )
    removed = platform.cli("plugins", "remove", f"{name}@1.0.0")

    assert registered.returncode == 0, registered.stderr
    assert f"registered {name}@1.0.0" in registered.stdout
    assert bad.returncode == 2
    assert "cannot read" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert removed.returncode == 0, removed.stderr
    assert f"removed {name} 1.0.0" in removed.stdout


def test_removal_warns_recent_callers_and_runs_that_still_need_it(
    platform: Platform, api: httpx.Client, modules: dict[str, bytes]
) -> None:
    name = f"warn_{uuid.uuid4().hex[:8]}"
    assert (
        register(api, modules["wordcount"], descriptor("wordcount", name=name)).status_code == 201
    )
    token = platform.agent(f"user-{uuid.uuid4().hex[:8]}", PermissionLevel.READ_ONLY)
    with httpx.Client(
        base_url=platform.base_url, headers={"Authorization": f"Bearer {token}"}
    ) as agent:
        me = agent.get("/v1/agents/me").json()["id"]
        assert call(agent, name, {"text": "used once"})["status"] == "success"
        plan = {
            "nodes": [
                {"id": "wait", "tool": "sleepy", "arguments": {"seconds": 1.5}},
                {"id": "count", "tool": name, "arguments": {"text": "a b"}, "depends_on": ["wait"]},
            ]
        }
        run_id = agent.post("/v1/dags", json={"plan": plan}).json()["id"]
        assert agent.get(f"/v1/agents/{me}/warnings").json() == []
        wait_for(
            lambda: agent.get("/v1/history", params={"tool": name}).json()["rows"],
            10,
            "the call's history row (workers write them in batches)",
        )

        assert api.delete(f"/v1/tools/{name}").status_code == 200

        warnings = [w["message"] for w in agent.get(f"/v1/agents/{me}/warnings").json()]
        view = agent.get(f"/v1/dags/{run_id}").json()
        other = agent.get("/v1/agents/someone-else/warnings")
    assert f"plugin {name}@1.0.0 was removed; calls to it now fail" in warnings
    assert any(f"DAG run {run_id} still has nodes on it: count" in w for w in warnings)
    assert view["warnings"] == [
        f"node count: tool {name} is no longer registered; the node will fail"
    ]
    assert other.status_code == 404
    assert api.get(f"/v1/agents/{me}/warnings").status_code == 200  # operators see any agent's


def test_a_call_queued_for_a_removed_plugin_ends_with_an_error(
    platform: Platform, api: httpx.Client, modules: dict[str, bytes]
) -> None:
    name = f"gone_{uuid.uuid4().hex[:8]}"
    assert (
        register(api, modules["wordcount"], descriptor("wordcount", name=name)).status_code == 201
    )
    assert api.delete(f"/v1/tools/{name}").status_code == 200
    queued = ToolCall(tool_name=name, version="1.0.0", arguments={"text": "late"})
    # As if it had been queued just before the removal.
    put_on_broker(
        platform.redis_url,
        envelope(queued, queue=PermissionLevel.READ_ONLY.queue_name, time_limit_s=5),
    )

    wait_for(lambda: api.get(f"/v1/calls/{queued.id}").status_code == 200, 30, "the call's end")
    result = api.get(f"/v1/calls/{queued.id}").json()
    assert result["status"] == "error"
    assert result["error"].startswith(f"unknown tool: {name}@1.0.0")


def test_the_compiled_module_cache_survives_a_worker_restart(
    platform: Platform, api: httpx.Client, modules: dict[str, bytes]
) -> None:
    name = f"cache_{uuid.uuid4().hex[:8]}"
    assert (
        register(api, modules["linefilter"], descriptor("linefilter", name=name)).status_code == 201
    )
    digest = hashlib.sha256(modules["linefilter"]).hexdigest()
    (entry,) = (platform.settings.platform_home / "plugin-cache").glob(f"{digest}.*.cwasm")
    before = entry.stat().st_ino
    arguments = {"text": "a\nb a", "contains": "a"}
    assert call(api, name, arguments)["status"] == "success"

    log = platform.logs / "worker-read_only.log"
    started = log.read_bytes().count(b"ready.")
    worker = platform.processes["worker-read_only"]
    terminate([worker], 15)
    platform.start_worker(PermissionLevel.READ_ONLY)
    wait_for(lambda: log.read_bytes().count(b"ready.") > started, 60, "the restarted worker")

    assert call(api, name, arguments)["output"] == {"lines": ["a", "b a"], "count": 2}
    assert entry.stat().st_ino == before  # loaded, not compiled and written again
    api.delete(f"/v1/tools/{name}")


def test_a_sub_agent_is_offered_a_plugin_registered_after_its_worker_started(
    platform: Platform, api: httpx.Client, modules: dict[str, bytes], model: ScriptedModel
) -> None:
    """The delegation worker's pool processes load the plugins when they start and keep
    them current: a sub-agent's model sees a plugin registered a moment ago, and its call
    of it runs."""
    name = f"late_{uuid.uuid4().hex[:8]}"
    sub_agent = f"plugin-user-{uuid.uuid4().hex[:8]}"
    definition = {
        "name": sub_agent,
        "description": "Counts words.",
        "prompt": "Count.",
        "tools": [name],
        "ceiling": "read_only",
    }
    assert api.put(f"/v1/subagents/{sub_agent}", json=definition).status_code == 201
    assert (
        register(api, modules["wordcount"], descriptor("wordcount", name=name)).status_code == 201
    )
    model.script(tool_calls((name, {"text": "three small words"})), answer("3"))

    task = call(api, "task", {"agent": sub_agent, "prompt": "Count the words."})

    assert task["status"] == "success", task
    assert model.offered_tools() == [name]
    assert task["output"]["tools"] == [name]
    [made] = [c for turn in task["output"]["trace"] for c in turn.get("tool_calls") or []]
    assert (made["tool"], made["status"]) == (name, "success"), made
