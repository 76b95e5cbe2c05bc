"""Tool selection through the API and the CLI: over the registry and over a supplied
list, feedback on real calls, the blacklist after real failures, the whitelist."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import httpx
import pytest

from tests.integration.platform import Platform, wait_for
from tests.scripted_model import ScriptedModel, answer, tool_calls
from tests.selection.test_guesses import PRICER_SCHEMA
from toolrun.client import AsyncClient
from toolrun.permissions.levels import PermissionLevel

BOOKING = {
    "type": "function",
    "function": {
        "name": "hotel.book",
        "description": "Book a hotel room in a city for some nights",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
            "required": ["city", "nights"],
        },
    },
}
WEATHER = {
    "name": "weather.get",
    "description": "Current weather of a city",
    "parameters": {"type": "dict", "properties": {"city": {"type": "str"}}, "required": ["city"]},
}


@pytest.fixture(autouse=True)
def rules_only(model: ScriptedModel) -> None:
    """The platform's model (steps 2 and 5) answers 500 unless a test scripts it: the
    rules do those steps, and the trace says why."""
    model.script()


def select(api: httpx.Client, **body: Any) -> dict[str, Any]:
    response = api.post("/v1/select", json=body)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def test_select_over_the_registry_picks_the_tool_and_fills_its_arguments(
    api: httpx.Client,
) -> None:
    found = select(api, task='Read the file "hello.txt"')

    assert found["chosen"] == "read"
    assert found["arguments"] == {"file_path": "hello.txt"}
    assert found["valid"] is True
    assert found["trace"]["1_scenario"][0] == "file operations"
    assert found["trace"]["2_intents"][0] == "read"
    ran = api.post(
        "/v1/calls",
        params={"wait": 30},
        json={"tool_name": found["chosen"], "arguments": found["arguments"]},
    ).json()
    assert ran["status"] == "success"


def test_select_over_a_supplied_list_in_openai_or_bfcl_format(api: httpx.Client) -> None:
    found = select(api, task="Book a room in Porto for 3 nights", tools=[BOOKING, WEATHER])
    nothing = select(api, task="Translate this poem into French", tools=[BOOKING, WEATHER])
    subset = select(api, task="Read the file notes.txt", tools=["grep", "glob"])
    strict = select(
        api, task="Book a room in Porto for 3 nights", tools=[BOOKING], min_confidence=0.999
    )
    out_of_range = api.post("/v1/select", json={"task": "x", "min_confidence": 1.0})

    assert found["chosen"] == "hotel.book"
    assert 0.5 <= found["candidates"][0]["confidence"] < 0.999
    assert strict["chosen"] is None
    assert strict["candidates"][0]["needed"] == 0.999
    assert out_of_range.status_code == 422
    assert found["arguments"] == {"city": "Porto", "nights": 3}
    assert nothing["chosen"] is None
    assert nothing["reason"].startswith("no suitable tool")
    assert {c["name"] for c in subset["candidates"]} <= {"grep", "glob"}


def test_the_api_weighs_meaning_where_words_leave_doubt(api: httpx.Client) -> None:
    rating = {
        "name": "get_movie_rating",
        "description": "Get the rating of a movie",
        "parameters": {"type": "object", "properties": {"title": {"type": "string"}}},
    }

    found = select(api, task="Rate my cooking recipe for pancakes", tools=[rating, WEATHER])

    assert found["chosen"] is None  # by words alone: get_movie_rating
    assert found["trace"]["3_matching_by"].startswith("words and meaning")
    assert found["candidates"][0]["similarity"] < 0.3


def test_the_api_guesses_an_open_text_parameter_by_meaning(api: httpx.Client) -> None:
    task = "What is the price to commission a sculpture made of marble with a size of 3 feet?"

    found = select(api, task=task, tools=[PRICER_SCHEMA])

    assert found["chosen"] == "sculpture_price.calculate"
    assert found["arguments"] == {"material": "marble", "size": 3}
    assert (found["missing"], found["guessed"], found["valid"]) == ([], ["material"], False)
    assert found["trace"]["5_arguments"]["material"].endswith("(a guess)")


def test_bad_selection_requests_are_refused_clearly(api: httpx.Client) -> None:
    mixed = api.post("/v1/select", json={"task": "x", "tools": ["read", BOOKING]})
    unknown = api.post("/v1/select", json={"task": "x", "tools": ["read", "nope"]})
    bad_tool = api.post("/v1/select", json={"task": "x", "tools": [{"description": "?"}]})
    empty = api.post("/v1/select", json={"task": ""})

    assert mixed.status_code == 422
    assert (unknown.status_code, unknown.json()["detail"]) == (422, "unknown tools: nope")
    assert bad_tool.status_code == 422
    assert bad_tool.json()["detail"] == "tools[0]: a tool needs a non-empty name"
    assert empty.status_code == 422


def test_an_agent_selects_only_among_the_tools_it_may_call(platform: Platform) -> None:
    token = platform.agent(f"reader-{uuid.uuid4().hex[:6]}", PermissionLevel.READ_ONLY)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=platform.base_url, headers=headers, timeout=30) as reader:
        found = select(reader, task="Write 'hi' to the file out.txt", top_k=50)

    assert "write" not in {c["name"] for c in found["candidates"]}


def test_feedback_on_a_call_shows_in_recommendations(platform: Platform, api: httpx.Client) -> None:
    call = api.post(
        "/v1/calls",
        params={"wait": 30},
        json={"tool_name": "glob", "arguments": {"pattern": "*.txt"}},
    ).json()

    def recorded() -> bool:  # workers write history rows in batches
        rows = api.get("/v1/history", params={"tool": "glob", "limit": 1000}).json()["rows"]
        return call["call_id"] in {row["call_id"] for row in rows}

    wait_for(recorded, 30, "the call's history row")
    token = platform.agent(f"other-{uuid.uuid4().hex[:6]}", PermissionLevel.READ_ONLY)

    rated = api.post(f"/v1/calls/{call['call_id']}/feedback", json={"rating": 5})
    with httpx.Client(
        base_url=platform.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
    ) as other:
        stranger = other.post(f"/v1/calls/{call['call_id']}/feedback", json={"rating": 1})
    bad = api.post(f"/v1/calls/{call['call_id']}/feedback", json={"rating": 9})
    found = api.get("/v1/recommendations", params={"task": "List the files matching *.txt"})

    assert rated.status_code == 204, rated.text
    assert stranger.status_code == 404
    assert bad.status_code == 422
    assert found.status_code == 200
    assert found.json()["history"]["glob"]["rating"] == 5.0


def test_a_tool_failing_n_times_in_a_row_is_blacklisted_until_lifted(
    platform: Platform, api: httpx.Client
) -> None:
    counter = f"fails-{uuid.uuid4().hex[:8]}"
    for _ in range(5):  # TOOLRUN_BLACKLIST_FAILURES: 5
        failed = api.post(
            "/v1/calls",
            params={"wait": 30},
            json={"tool_name": "flaky", "arguments": {"counter": counter, "fail_times": 99}},
        ).json()
        assert failed["status"] == "error"

    def listed() -> bool:
        return "flaky" in {b["tool_name"] for b in api.get("/v1/blacklist").json()}

    wait_for(listed, 30, "flaky on the blacklist")
    task = "Fail the first calls per counter file"
    excluded = api.get("/v1/recommendations", params={"task": task}).json()
    lifted = platform.cli("blacklist", "lift", "flaky")
    back = api.get("/v1/recommendations", params={"task": task}).json()

    assert "flaky" not in {c["name"] for c in excluded["candidates"]}
    assert lifted.returncode == 0, lifted.stderr
    assert back["chosen"] == "flaky"
    assert api.delete("/v1/blacklist/flaky").status_code == 404  # not on it any more


def test_operators_keep_lists_through_the_cli(platform: Platform, api: httpx.Client) -> None:
    added = platform.cli("blacklist", "add", "http_fetch", "--for", "1h", "--reason", "outage")
    listed = platform.cli("blacklist", "list", "--json")
    white = platform.cli("whitelist", "add", "search")
    entries = json.loads(platform.cli("whitelist", "list", "--json").stdout)
    chosen = platform.cli("select", "Find the definition of the function main", "--json")
    [entry] = [e for e in entries if e["tool_name"] == "search"]
    removed = platform.cli("whitelist", "remove", entry["id"])
    unknown = platform.cli("blacklist", "add", "no_such_tool")
    api.delete("/v1/blacklist/http_fetch")

    assert added.returncode == 0, added.stderr
    outage = [b for b in json.loads(listed.stdout) if b["tool_name"] == "http_fetch"]
    assert outage[0]["reason"] == "set by admin: outage"
    assert white.returncode == 0, white.stderr
    assert json.loads(chosen.stdout)["chosen"] == "search"
    assert "whitelisted" in json.loads(chosen.stdout)["candidates"][0]["why"]
    assert removed.returncode == 0
    assert unknown.returncode != 0
    assert "unknown tool: no_such_tool" in unknown.stderr


def test_an_agent_sees_global_whitelist_entries_and_its_own_only(
    platform: Platform, api: httpx.Client
) -> None:
    names = [f"white-{uuid.uuid4().hex[:6]}" for _ in range(2)]
    tokens = [platform.agent(name, PermissionLevel.READ_ONLY) for name in names]
    added = [
        api.post("/v1/whitelist", json={"tool_name": "grep", "agent_name": name}).json()
        for name in names
    ]
    everyone = api.post("/v1/whitelist", json={"tool_name": "glob"}).json()
    headers = {"Authorization": f"Bearer {tokens[0]}"}
    with httpx.Client(base_url=platform.base_url, headers=headers, timeout=30) as first:
        seen = {entry["id"] for entry in first.get("/v1/whitelist").json()}
    every = {entry["id"] for entry in api.get("/v1/whitelist").json()}
    for entry in [*added, everyone]:
        api.delete(f"/v1/whitelist/{entry['id']}")

    assert added[0]["id"] in seen
    assert everyone["id"] in seen
    assert added[1]["id"] not in seen  # another agent's entry
    assert {added[0]["id"], added[1]["id"], everyone["id"]} <= every  # the operator's view


def test_the_cli_select_prints_the_five_steps(platform: Platform) -> None:
    shown = platform.cli("select", 'Read the file "hello.txt"')
    nothing = platform.cli("select", "Translate this poem into French")
    bad = platform.cli("select", "x", "--context", "[1]")

    assert shown.returncode == 0, shown.stderr
    for step in ("1 scenario", "2 intents", "3 matching by", "4 evaluation", "5 arguments"):
        assert step in shown.stdout
    assert '"file_path": "hello.txt"' in shown.stdout
    assert nothing.returncode == 1
    assert bad.returncode == 2
    assert "--context must be a JSON object" in bad.stderr


def test_a_configured_model_does_steps_2_and_5(api: httpx.Client, model: ScriptedModel) -> None:
    model.script(
        answer('{"intents": ["create"]}'),
        tool_calls(("hotel_book", {"city": "Lisbon", "nights": 3})),
    )

    found = select(api, task="Book a room in Portugal's capital for three nights", tools=[BOOKING])
    fallback = select(api, task="Book a room in Porto for 3 nights", tools=[BOOKING])

    assert found["trace"]["2_intents_by"] == "model"
    assert found["arguments"] == {"city": "Lisbon", "nights": 3}
    assert found["valid"] is True
    assert fallback["trace"]["5_arguments_by"].startswith("rules (the model failed")
    assert fallback["arguments"] == {"city": "Porto", "nights": 3}


def test_the_async_client_selects_rates_and_recommends(
    platform: Platform, api: httpx.Client
) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with AsyncClient(platform.base_url, token=platform.token) as client:
            found = await client.select('Read the file "hello.txt"')
            result = await client.call(found["chosen"], found["arguments"])
            await client.feedback(result.call_id, 4, "right file")
            return found, await client.recommendations("Read the file hello.txt", top_k=3)

    found, recommended = asyncio.run(scenario())
    parked = api.post(
        "/v1/calls",
        params={"wait": 5},
        json={"tool_name": "bash", "arguments": {"command": "rm -rf no-such-dir"}},
    ).json()
    rated_early = api.post(f"/v1/calls/{parked['call_id']}/feedback", json={"rating": 5})

    assert (found["chosen"], found["arguments"]) == ("read", {"file_path": "hello.txt"})
    assert recommended["candidates"][0]["name"] == "read"
    assert len(recommended["candidates"]) <= 3
    assert parked["status"] == "awaiting_approval"
    assert rated_early.status_code == 404  # not ended: nothing to rate yet
