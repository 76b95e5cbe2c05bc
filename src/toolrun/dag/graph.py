"""The plan as a graph: each node's dependencies, cycles, order, descendants, Mermaid."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping

from toolrun.dag.plan import Plan
from toolrun.dag.refs import BadReference, Reference, references

Graph = dict[str, set[str]]  # node id → the ids it depends on


def dependencies(plan: Plan) -> Graph:
    """Each node's dependencies: its `depends_on` and the nodes its references name
    (references that do not parse are left to validation)."""
    return {node.id: set(node.depends_on) | data_sources(node.arguments) for node in plan.nodes}


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a] (a depends on b ...), or None. Unknown ids are ignored."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, list[str]]] = [(start, sorted(graph[start] & graph.keys()))]
        path.append(start)
        on_path.add(start)
        while stack:
            node, pending = stack[-1]
            if not pending:
                stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
                continue
            nxt = pending.pop()
            if nxt in on_path:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in done:
                stack.append((nxt, sorted(graph[nxt] & graph.keys())))
                path.append(nxt)
                on_path.add(nxt)
    return None


def dependents(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The reverse graph: for each node, the nodes that depend on it directly."""
    users: dict[str, set[str]] = {node: set() for node in graph}
    for node, needed in graph.items():
        for dependency in needed:
            users.setdefault(dependency, set()).add(node)
    return users


def topological_order(graph: Mapping[str, set[str]]) -> list[str]:
    """Node ids, each after all it depends on (ties in id order). The graph has no cycle."""
    waiting = {node: len(needed) for node, needed in graph.items()}
    users = dependents(graph)
    ready = deque(sorted(node for node, count in waiting.items() if count == 0))
    order: list[str] = []
    while ready:
        node = ready.popleft()
        order.append(node)
        for user in sorted(users[node]):
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    return order


def descendants(users: Mapping[str, set[str]], node_id: str) -> set[str]:
    """Every node that depends on `node_id`, directly or not, given the reverse graph
    (`dependents`)."""
    found: set[str] = set()
    pending = [node_id]
    while pending:
        for user in users.get(pending.pop(), ()):
            if user not in found:
                found.add(user)
                pending.append(user)
    return found


def mermaid(plan: Plan) -> str:
    """A Mermaid flowchart of the plan: a box per node (id and tool), an arrow per
    dependency, dotted where it only orders (no data flows)."""
    graph = dependencies(plan)
    box = {node.id: f"n{index}" for index, node in enumerate(plan.nodes)}
    lines = ["flowchart TD"]
    for node in plan.nodes:
        label = f"{node.id}<br/>{node.tool}".replace('"', "#quot;")
        lines.append(f'    {box[node.id]}["{label}"]')
    for node in plan.nodes:
        ordered_only = set(node.depends_on) - data_sources(node.arguments)
        for dependency in sorted(graph[node.id] & box.keys()):
            arrow = "-.->" if dependency in ordered_only else "-->"
            lines.append(f"    {box[dependency]} {arrow} {box[node.id]}")
    return "\n".join(lines) + "\n"


def data_sources(arguments: object) -> set[str]:
    """The nodes that the references in `arguments` take values from."""
    sources = set()
    for _where, text in references(arguments):
        try:
            sources.add(Reference.parse(text).node)
        except BadReference:
            continue
    return sources
