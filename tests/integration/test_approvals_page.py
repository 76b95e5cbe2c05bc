"""The approval web page in headless Chromium: pending calls appear, a click decides them."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.integration.platform import Platform, apart
from toolrun.permissions.levels import PermissionLevel

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SEEN_S = 15_000  # ms: the page polls every second
# Screenshots the tests take (TOOLRUN_TEST_ARTIFACTS overrides; CI keeps the directory).
ARTIFACTS = (
    Path(os.environ.get("TOOLRUN_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts"))
    / "approvals-page"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs Debian's chromium (apt-get install chromium)")
        pytest.skip("no chromium on this machine")
    with sync_playwright() as playwright:
        # --no-sandbox: Chromium's own sandbox refuses to start as root (CI runs as root).
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser, platform: Platform) -> Iterator[Page]:
    with approval_page(browser, platform.base_url, platform.token) as opened:
        yield opened


@contextmanager
def approval_page(browser: Browser, base_url: str, token: str) -> Iterator[Page]:
    """The approval page of the platform at `base_url`, signed in with `token`."""
    page = browser.new_page()
    try:
        page.goto(f"{base_url}/ui/approvals#token={token}")
        yield page
    finally:
        page.close()


def keep(page: Page, name: str) -> None:
    """A screenshot of the page as the test saw it, kept as an artifact of the run."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def park(api: httpx.Client, command: str) -> dict[str, Any]:
    body = {"tool_name": "bash", "arguments": {"command": command}}
    result = dict(api.post("/v1/calls", json=body).json())
    assert result["status"] == "awaiting_approval", result
    return result


def test_a_click_on_approve_runs_the_call(
    page: Page, api: httpx.Client, platform_workspace: Path
) -> None:
    target = platform_workspace / "page-approve"
    target.mkdir()
    # Loaded and polling: "No call is waiting", or the rows of calls other tests left.
    page.locator("#empty:visible, #pending tbody tr").first.wait_for()
    assert "token" not in page.url  # dropped from the address bar

    parked = park(api, f"rm -rf {target.name}")  # after the page loaded: no reload needed
    row = page.locator(f'tr[data-call-id="{parked["call_id"]}"]')
    row.wait_for(timeout=SEEN_S)

    assert f"rm -rf {target.name}" in row.inner_text()
    assert "high / dangerous" in row.inner_text()
    assert "rm -rf deletes trees" in row.inner_text()
    assert target.exists()
    row.locator("button.approve").click()
    page.get_by_text(f"approved {parked['call_id']}").wait_for(timeout=SEEN_S)
    final = api.get(f"/v1/calls/{parked['call_id']}", params={"wait": 30}).json()

    assert final["status"] == "success"
    assert final["metadata"]["approved_by"] == "admin"
    assert not target.exists()
    row.wait_for(state="detached", timeout=SEEN_S)


def test_a_click_on_deny_with_a_reason(
    page: Page, api: httpx.Client, platform_workspace: Path
) -> None:
    target = platform_workspace / "page-deny"
    target.mkdir()
    parked = park(api, f"rm -rf {target.name}")
    row = page.locator(f'tr[data-call-id="{parked["call_id"]}"]')
    row.wait_for(timeout=SEEN_S)

    row.locator("input.reason").fill("wrong directory")
    with page.expect_response(lambda response: "/v1/approvals" in response.url):
        pass  # a refresh happens in between: it must keep the row and the typed reason
    row.locator("button.deny").click()
    page.get_by_text(f"denied {parked['call_id']}").wait_for(timeout=SEEN_S)

    final = api.get(f"/v1/calls/{parked['call_id']}").json()
    assert final["status"] == "denied"
    assert final["error"].endswith("denied by admin: wrong directory")
    assert target.exists()


def test_arguments_are_shown_as_text_never_run_as_markup(page: Page, api: httpx.Client) -> None:
    payload = "<img src=x onerror=\"document.title='pwned'\">"
    parked = park(api, f"rm -rf '{payload}'")
    row = page.locator(f'tr[data-call-id="{parked["call_id"]}"]')
    row.wait_for(timeout=SEEN_S)

    assert payload in row.inner_text()
    assert row.locator("img").count() == 0
    assert page.title() == "toolrun · approvals"
    api.post(f"/v1/calls/{parked['call_id']}/deny")


def test_a_bad_token_shows_the_login_form(browser: Browser, platform: Platform) -> None:
    with approval_page(browser, platform.base_url, "trk_forged") as page:
        page.locator("#login").wait_for(timeout=SEEN_S)
        status = page.locator("#status")
        assert status.is_visible()  # not inside a hidden part of the page
        assert "token refused: invalid or revoked token" in status.inner_text()
        keep(page, "bad-token")


def test_an_agents_token_is_told_it_may_not_decide(browser: Browser, platform: Platform) -> None:
    token = platform.agent(f"nosy-{uuid.uuid4().hex[:6]}", PermissionLevel.READ_ONLY)
    with approval_page(browser, platform.base_url, token) as page:
        status = page.locator("#status")
        status.get_by_text("may not see or decide calls").wait_for(timeout=SEEN_S)
        assert status.is_visible()
        assert "use an operator's" in status.inner_text()
        assert not page.get_by_text("No call is waiting").is_visible()  # calls may be
        keep(page, "agent-token")


@pytest.fixture(scope="module")
def asking(redis_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    """A platform of its own that asks before every confirm call (no auto-approval), with
    no workers: parked calls stay parked."""
    with apart(redis_url, 3, tmp_path_factory.mktemp("asking"), levels=()) as started:
        yield started


def test_an_approver_sees_what_a_call_would_do(browser: Browser, asking: Platform) -> None:
    (asking.workspace / "page-notes.txt").write_text("alpha\nbeta\n")
    with httpx.Client(base_url=asking.base_url, headers=asking.headers, timeout=60) as api:
        body = {"file_path": "page-notes.txt", "content": "alpha\nBETA\n"}
        written = api.post("/v1/calls", json={"tool_name": "write", "arguments": body}).json()
        assert written["status"] == "awaiting_approval", written
        command = park(api, "rm -rf page-build && echo done")
        with approval_page(browser, asking.base_url, asking.token) as page:
            change = page.locator(f'tr[data-call-id="{written["call_id"]}"]')
            change.locator(".diff").wait_for(timeout=SEEN_S)
            assert change.locator(".diff .del").inner_text().strip() == "-beta"
            assert change.locator(".diff .add").inner_text().strip() == "+BETA"
            assert "change to page-notes.txt" in change.inner_text()
            assert re.search(r"in (59|60) min \(", change.inner_text())  # not a bare clock
            line = page.locator(f'tr[data-call-id="{command["call_id"]}"]')
            line.locator(".commands").wait_for(timeout=SEEN_S)
            assert line.locator(".commands").inner_text().splitlines() == [
                "$ rm -rf page-build",
                "$ echo done",
            ]
            assert f"runs in {asking.workspace}" in line.inner_text()
            keep(page, "what-it-would-do")
            for parked in (written, command):
                api.post(f"/v1/calls/{parked['call_id']}/deny", json={"reason": "seen"})
            decided = page.locator("#decided tbody tr", has_text=command["call_id"])
            decided.wait_for(timeout=SEEN_S)  # the last hour's decisions
            assert "denied" in decided.inner_text()
            assert "seen" in decided.inner_text()
            keep(page, "decided")


def test_approve_and_remember_makes_a_standing_rule(browser: Browser, asking: Platform) -> None:
    name = f"keeper-{uuid.uuid4().hex[:6]}"
    headers = {"Authorization": f"Bearer {asking.agent(name, PermissionLevel.EXECUTE)}"}
    move = {"tool_name": "bash", "arguments": {"command": "mv draft.txt final.txt"}}
    both = {"tool_name": "bash", "arguments": {"command": "mv a.txt b.txt && mv c.txt d.txt"}}
    with httpx.Client(base_url=asking.base_url, headers=headers, timeout=60) as agent:
        parked = agent.post("/v1/calls", json=move).json()
        compound = agent.post("/v1/calls", json=both).json()
        dangerous = agent.post("/v1/calls", json=bash_call("rm -rf build")).json()
        assert [c["status"] for c in (parked, compound, dangerous)] == ["awaiting_approval"] * 3
        with approval_page(browser, asking.base_url, asking.token) as page:
            row = page.locator(f'tr[data-call-id="{parked["call_id"]}"]')
            row.locator("button.remember:enabled").click(timeout=SEEN_S)
            page.get_by_text("runs without asking from now on").wait_for(timeout=SEEN_S)
            # A dangerous call is always a person's decision: nothing to remember.
            never = page.locator(f'tr[data-call-id="{dangerous["call_id"]}"] button.remember')
            page.wait_for_timeout(1500)  # the buttons have armed
            assert never.is_disabled()
            assert never.get_attribute("title") == "only a confirm-policy call can be remembered"
            # A rule the API refuses leaves the call undecided, its buttons usable again.
            failing = page.locator(f'tr[data-call-id="{compound["call_id"]}"]')
            failing.locator("button.remember").click()
            page.get_by_text(f"approve {compound['call_id']} failed").wait_for(timeout=SEEN_S)
            failing.locator("button.deny:enabled").wait_for(timeout=SEEN_S)
            keep(page, "remember")
        again = agent.post("/v1/calls", json=move).json()
        other = agent.post("/v1/calls", json=bash_call("mv other.txt final.txt")).json()
    assert again["status"] == "queued"  # the same line from the same agent: not asked
    assert other["status"] == "awaiting_approval"
    with httpx.Client(base_url=asking.base_url, headers=asking.headers, timeout=60) as admin:
        assert admin.post("/v1/calls", json=move).json()["status"] == "awaiting_approval"


def bash_call(command: str) -> dict[str, Any]:
    return {"tool_name": "bash", "arguments": {"command": command}}


def test_remembering_a_write_covers_those_arguments_only(
    browser: Browser, asking: Platform
) -> None:
    (asking.workspace / "remembered.txt").write_text("old\n")
    body = {"file_path": "remembered.txt", "content": "new\n"}
    call = {"tool_name": "write", "arguments": body}
    with httpx.Client(base_url=asking.base_url, headers=asking.headers, timeout=60) as api:
        parked = api.post("/v1/calls", json=call).json()
        assert parked["status"] == "awaiting_approval", parked
        with approval_page(browser, asking.base_url, asking.token) as page:
            row = page.locator(f'tr[data-call-id="{parked["call_id"]}"]')
            row.locator("button.remember").click(timeout=SEEN_S)
            page.get_by_text("runs without asking from now on").wait_for(timeout=SEEN_S)
        same = api.post("/v1/calls", json=call).json()
        other = api.post("/v1/calls", json={**call, "arguments": {**body, "content": "x"}})
    assert same["status"] == "queued"  # no worker here: it waits for one, not for a person
    assert other.json()["status"] == "awaiting_approval"
