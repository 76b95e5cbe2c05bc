"""The plan format, its validation and its graph."""

from __future__ import annotations

import random

import pytest

from toolrun.dag import PlanError, load_plan, mermaid, plan_problems
from toolrun.dag.graph import (
    dependencies,
    dependents,
    descendants,
    find_cycle,
    topological_order,
)
from toolrun.dag.plan import FailurePolicy, RetryPolicy
from toolrun.permissions.agents import AgentProfile
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role
from toolrun.tools.registry import ToolRegistry

REGISTRY = ToolRegistry.with_builtins()
PLAN = """
max_concurrency: 2
policy: {on_failure: skip, retry: {max_attempts: 4}}
nodes:
  - {id: find, tool: glob, arguments: {pattern: "**/*.py"}}
  - id: first
    tool: read
    arguments: {file_path: {$ref: "find.output.files[0]"}}
    on_failure: retry
  - {id: last, tool: grep, arguments: {pattern: x}, depends_on: [first], timeout_s: 5}
"""


def test_a_yaml_plan_loads_with_its_policies() -> None:
    plan = load_plan(PLAN, name="plan.yaml")

    assert [node.id for node in plan.nodes] == ["find", "first", "last"]
    assert plan.on_failure(plan.node("find")) is FailurePolicy.SKIP
    assert plan.on_failure(plan.node("first")) is FailurePolicy.RETRY
    assert plan.retry(plan.node("first")).max_attempts == 4
    assert plan.timeout_s(plan.node("last")) == 5
    assert plan.max_concurrency == 2
    assert dependencies(plan) == {"find": set(), "first": {"find"}, "last": {"first"}}
    assert plan_problems(plan, REGISTRY) == []


def test_json_files_must_be_json() -> None:
    with pytest.raises(PlanError, match=r"plan.json is not valid JSON"):
        load_plan("nodes: []", name="plan.json")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("nodes: [{id: a, tool: read, arguments: {x: [}]", "line 1, column"),
        ("[1, 2]", "Input should be a valid dictionary"),
        ("nodes: [{id: a b, tool: read}]", "nodes[0].id: String should match pattern"),
        ("nodes: [{id: a, tool: read, on_failure: maybe}]", "nodes[0].on_failure: Input should be"),
        ("nodes: [{id: a, tool: read, retry: {backoff: 0}}]", "nodes[0].retry.backoff"),
        (
            "nodes: [{id: a, tool: read, retry: {on_exhausted: retry}}]",
            "on_exhausted must be stop or skip",
        ),
        ("nodes: [{id: a, tool: read, colour: red}]", "nodes[0].colour: unknown field"),
        ("nodes: [{id: a, tool: read}]\nmax_concurrency: 0", "max_concurrency"),
    ],
)
def test_malformed_plans_name_where_the_problem_is(text: str, problem: str) -> None:
    with pytest.raises(PlanError) as caught:
        load_plan(text)

    assert any(problem in line for line in caught.value.problems), caught.value.problems


def test_every_problem_is_listed_at_once() -> None:
    plan = load_plan("""
nodes:
  - {id: a, tool: read, arguments: {file_path: 3}}
  - {id: a, tool: nosuch}
  - {id: b, tool: read, arguments: {file_path: {$ref: zz.output}}, depends_on: [b, yy]}
  - {id: c, tool: read, arguments: {file_path: {$ref: "b.output["}}}
""")

    problems = plan_problems(plan, REGISTRY)

    assert problems == [
        "node id 'a' is used 2 times",
        "node 'a': parameter 'file_path' must be string, got integer 3",
        "node 'a': unknown tool: nosuch; available tools: " + ", ".join(REGISTRY.names()),
        "node 'b' depends on itself",
        "node 'b': depends_on names unknown node 'yy'",
        "node 'b': arguments.file_path: $ref 'zz.output' names unknown node 'zz'",
        "node 'c': arguments.file_path: $ref 'b.output[': cannot read '['"
        ' (use .name, [index] or ["key"])',
    ]


def test_a_referenced_argument_is_not_checked_against_the_schema_but_the_rest_is() -> None:
    plan = load_plan("""
nodes:
  - {id: a, tool: glob, arguments: {pattern: x}}
  - {id: b, tool: read, arguments: {file_path: {$ref: a.output}, offset: "ten", extra: 1}}
""")

    assert plan_problems(plan, REGISTRY) == [
        "node 'b': parameter 'offset' must be integer, got \"ten\"",
        "node 'b': unknown parameter: extra",
    ]


def test_a_cycle_is_named() -> None:
    plan = load_plan("""
nodes:
  - {id: a, tool: glob, arguments: {pattern: x}, depends_on: [c]}
  - {id: b, tool: read, arguments: {file_path: {$ref: "a.output.files[0]"}}}
  - {id: c, tool: read, arguments: {file_path: {$ref: b.output.path}}}
  - {id: d, tool: glob, arguments: {pattern: x}}
""")

    assert plan_problems(plan, REGISTRY) == ["dependency cycle: a → c → b → a"]
    assert find_cycle({"x": {"x"}}) == ["x", "x"]
    assert find_cycle({"x": {"y"}, "y": set()}) is None


def test_tools_above_the_agents_ceiling_or_outside_its_set_are_named() -> None:
    agent = AgentProfile(
        "id", "reader", Role.AGENT, PermissionLevel.READ_ONLY, frozenset({"read", "write"})
    )
    plan = load_plan("""
nodes:
  - {id: w, tool: write, arguments: {file_path: x, content: ""}}
  - {id: g, tool: glob, arguments: {pattern: x}}
  - {id: r, tool: read, arguments: {file_path: x}}
""")

    assert plan_problems(plan, REGISTRY, agent) == [
        "node 'w': agent may not call this tool (needs read_write, has read_only)",
        "node 'g': tool glob is not in the tool set of agent reader",
    ]


def test_order_and_descendants() -> None:
    graph = {"a": set(), "b": {"a"}, "c": {"a"}, "d": {"b", "c"}, "e": set()}

    order = topological_order(graph)

    assert order == ["a", "e", "b", "c", "d"]
    assert descendants(dependents(graph), "a") == {"b", "c", "d"}
    assert descendants(dependents(graph), "d") == set()


def test_mermaid_draws_data_and_order_edges() -> None:
    plan = load_plan(PLAN)

    assert mermaid(plan).splitlines() == [
        "flowchart TD",
        '    n0["find<br/>glob"]',
        '    n1["first<br/>read"]',
        '    n2["last<br/>grep"]',
        "    n0 --> n1",
        "    n1 -.-> n2",
    ]


def test_retry_delays_grow_by_backoff_up_to_the_cap_with_jitter_on_top() -> None:
    policy = RetryPolicy(initial_delay=1, backoff=3, max_delay=5, jitter=0.5)
    rng = random.Random(7)  # noqa: S311 - delays, not secrets

    delays = [policy.delay_s(attempt, rng) for attempt in (1, 2, 3, 4)]

    bases = [1, 3, 5, 5]
    for delay, base in zip(delays, bases, strict=True):
        assert base <= delay <= base * 1.5
    assert RetryPolicy(initial_delay=2, jitter=0).delay_s(1) == 2
