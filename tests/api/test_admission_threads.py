"""Where the API admits a call (real Redis, the app in-process, no worker): on the event
loop when the call is the only one being answered, on the admission threads when
another is being answered beside it (here one waiting for its result)."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from tests.conftest import agent_token

from toolrun.api import create_app
from toolrun.calls.lifecycle import Lifecycle
from toolrun.config import Settings
from toolrun.tools.model import ToolResult

READ = {"tool_name": "read", "arguments": {"file_path": "notes.txt"}}


def test_a_call_alone_is_admitted_on_the_loop_and_one_beside_another_on_the_threads(
    redis_url: str, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "notes.txt").write_text("a line\n")
    admitted_on: list[str] = []
    admit = Lifecycle.admit

    def recorded(self: Lifecycle, *args: Any, **kwargs: Any) -> ToolResult:
        admitted_on.append(threading.current_thread().name)
        return admit(self, *args, **kwargs)

    monkeypatch.setattr(Lifecycle, "admit", recorded)
    settings = Settings(workspace=workspace, home=tmp_path / "home", redis_url=redis_url)
    with TestClient(
        create_app(settings), headers={"Authorization": f"Bearer {agent_token(settings)}"}
    ) as client:
        assert client.post("/v1/calls", json=READ).json()["status"] == "queued"  # alone
        # No worker runs it: this one waits its 3 s while the next is sent.
        waiting = threading.Thread(
            target=client.post, args=("/v1/calls?wait=3",), kwargs={"json": READ}
        )
        waiting.start()
        deadline = time.monotonic() + 5
        while len(admitted_on) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        beside = client.post("/v1/calls", json=READ)
        waiting.join()

    assert beside.json()["status"] == "queued"
    loop, waited, sent_beside = admitted_on
    assert loop == waited  # each alone when it came
    assert not loop.startswith("admit")
    assert sent_beside.startswith("admit")
