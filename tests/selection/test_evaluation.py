"""Step 4's factors beyond words: cost (or permission level), latency against the other
candidates, and whether the required parameters can be filled — each in the trace."""

from __future__ import annotations

from typing import Any

from toolrun.selection.cards import ToolCard
from toolrun.selection.pipeline import Record, Selector


def tool(name: str, properties: dict[str, str], **extra: Any) -> ToolCard:
    schema = {
        "type": "object",
        "properties": {p: {"type": t} for p, t in properties.items()},
        "required": list(properties),
    }
    description = "Download a web page by URL and return it"
    return ToolCard.parse({"name": name, "description": description, "parameters": schema, **extra})


TASK = "Download the web page https://example.com"


def test_a_costly_tool_ranks_lower_and_needs_more_evidence() -> None:
    cheap = tool("fetch_page", {"url": "string"})
    costly = tool("get_page", {"url": "string"}, cost=1)

    selection = Selector([costly, cheap]).select(TASK)

    assert selection.chosen == "fetch_page"
    [second] = [c for c in selection.candidates if c.name == "get_page"]
    assert second.factors == {"cost": 0.9}
    assert "cost 1.00" in second.why
    assert second.needed > Selector([cheap]).select(TASK).candidates[0].needed
    assert selection.trace["3_matching"][1]["factors"] == {"cost": 0.9}


def test_only_an_admin_tool_with_weak_evidence_is_refused() -> None:
    admin = ToolCard(
        "clean_pages",
        "Download a web page by URL and return it",
        {"type": "object", "properties": {"url": {"type": "string"}}},
        permission="admin",
    )
    reader = ToolCard("clean_pages", admin.description, admin.parameters, permission="read_only")
    task = "Download the page at example dot com"  # loosely worded: weak evidence

    refused = Selector([admin]).select(task)

    assert Selector([reader]).select(task).chosen == "clean_pages"
    assert refused.chosen is None
    assert "permission admin" in refused.candidates[0].why
    assert "needed" in refused.reason
    # The URL its one parameter asks for, given as one, is strong evidence: it clears
    # even an admin tool's bar.
    assert Selector([admin]).select("Download https://example.com").chosen == "clean_pages"


def test_a_slower_tool_ranks_below_an_equal_faster_one() -> None:
    selector = Selector(
        [tool("fetch_page", {"url": "string"}), tool("get_page", {"url": "string"})]
    )
    plain = selector.select(TASK).chosen
    other = "get_page" if plain == "fetch_page" else "fetch_page"
    history = {
        plain: Record(success_rate=1.0, p50_ms=900.0),
        other: Record(success_rate=1.0, p50_ms=100.0),
    }

    timed = selector.select(TASK, history=history)

    assert timed.chosen == other
    slow = timed.candidates[1]
    assert slow.factors["latency"] < 1 < timed.candidates[0].factors["latency"]
    assert any(why.startswith("latency 1.8x") for why in slow.why)


def test_a_tool_whose_required_parameters_cannot_be_filled_ranks_lower() -> None:
    needy = tool("fetch_page", {"url": "string", "retries": "integer"})
    able = tool("get_page", {"url": "string"})

    selection = Selector([needy, able]).select(TASK)

    assert selection.chosen == "get_page"
    assert selection.candidates[1].factors == {"missing": 0.85}
    assert "cannot fill retries" in selection.candidates[1].why
