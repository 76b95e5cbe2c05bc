"""The approval web page in headless Chromium: pending calls appear, a click decides them."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.integration.platform import Platform

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SEEN_S = 15_000  # ms: the page polls every second


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
    opened = browser.new_page()
    opened.goto(f"{platform.base_url}/ui/approvals#token={platform.token}")
    yield opened
    opened.close()


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
    page = browser.new_page()
    try:
        page.goto(f"{platform.base_url}/ui/approvals#token=trk_forged")
        page.locator("#login").wait_for(timeout=SEEN_S)
        assert "token refused: invalid or revoked token" in page.locator("#status").inner_text()
    finally:
        page.close()
