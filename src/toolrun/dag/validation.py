"""Everything wrong with a plan before any of it runs, every problem at once."""

from __future__ import annotations

from collections import Counter
from typing import Any

from toolrun.dag.graph import dependencies, find_cycle
from toolrun.dag.plan import Node, Plan
from toolrun.dag.refs import BadReference, Reference, dotted, is_reference, references
from toolrun.errors import ToolNotFound
from toolrun.permissions.agents import AgentProfile
from toolrun.tools.base import Tool
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import explain

_PLACEHOLDER = object()  # where a reference will put a value: any type passes


def plan_problems(
    plan: Plan, registry: ToolRegistry, agent: AgentProfile | None = None
) -> list[str]:
    """Duplicate ids, unknown dependencies, bad references, cycles, unknown tools,
    arguments their tool's schema refuses, and (with `agent`) tools above its ceiling or
    outside its tool set — one line each, in node order."""
    problems = [
        f"node id {node_id!r} is used {count} times"
        for node_id, count in Counter(node.id for node in plan.nodes).items()
        if count > 1
    ]
    known = {node.id for node in plan.nodes}
    for node in plan.nodes:
        problems += _structure_problems(node, known)
        try:
            tool = chosen_tool(registry, node, agent)
        except ToolNotFound as exc:
            problems.append(f"node {node.id!r}: {exc}")
            continue
        problems += [f"node {node.id!r}: {problem}" for problem in _argument_problems(tool, node)]
        refusal = None if agent is None else agent.refusal(tool.descriptor)
        if refusal is not None:
            problems.append(f"node {node.id!r}: {refusal}")
    if not problems:
        cycle = find_cycle(dependencies(plan))
        if cycle is not None:
            problems.append("dependency cycle: " + " → ".join(cycle))
    return problems


def chosen_tool(registry: ToolRegistry, node: Node, agent: AgentProfile | None) -> Tool:
    """The tool version a node runs: its own version (or range), else the agent's pin,
    else the newest.

    Raises:
        ToolNotFound: no such tool (or version) among those the agent may see.
    """
    if agent is None:
        return registry.resolve(node.tool, node.version)
    return registry.resolve(node.tool, node.version, pin=agent.pin(node.tool), visible=agent.sees)


def _structure_problems(node: Node, known: set[str]) -> list[str]:
    problems = []
    for dependency in node.depends_on:
        if dependency == node.id:
            problems.append(f"node {node.id!r} depends on itself")
        elif dependency not in known:
            problems.append(f"node {node.id!r}: depends_on names unknown node {dependency!r}")
    for where, text in references(node.arguments):
        at = dotted(where)
        try:
            reference = Reference.parse(text)
        except BadReference as exc:
            problems.append(f"node {node.id!r}: arguments.{at}: {exc}")
            continue
        if reference.node == node.id:
            problems.append(f"node {node.id!r}: arguments.{at}: refers to its own output")
        elif reference.node not in known:
            problems.append(
                f"node {node.id!r}: arguments.{at}: $ref {reference.text!r} names unknown "
                f"node {reference.node!r}"
            )
    return problems


def _argument_problems(tool: Tool, node: Node) -> list[str]:
    """Schema violations of the node's arguments, ignoring the places references fill."""
    filled = {tuple(where) for where, _text in references(node.arguments)}
    arguments = _with_placeholders(node.arguments)
    problems = []
    for error in tool.validator.iter_errors(arguments):
        path = tuple(error.absolute_path)
        if any(path[: len(where)] == where for where in filled):
            continue
        if _PLACEHOLDER is error.instance:
            continue
        problems.append(explain(error))
    return list(dict.fromkeys(problems))


def _with_placeholders(arguments: Any) -> Any:
    if isinstance(arguments, dict):
        if is_reference(arguments):
            return _PLACEHOLDER
        return {key: _with_placeholders(value) for key, value in arguments.items()}
    if isinstance(arguments, list):
        return [_with_placeholders(value) for value in arguments]
    return arguments
