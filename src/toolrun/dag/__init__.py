"""DAG plans: their format, references between nodes, graph checks and validation (pure:
no broker, no database). The scheduler (`toolrun.scheduler`) runs them."""

from toolrun.dag.graph import dependencies, mermaid, topological_order
from toolrun.dag.plan import (
    FailurePolicy,
    Node,
    Plan,
    PlanError,
    RetryPolicy,
    load_plan,
    parse_plan,
)
from toolrun.dag.refs import Reference, resolve
from toolrun.dag.validation import plan_problems

__all__ = [
    "FailurePolicy",
    "Node",
    "Plan",
    "PlanError",
    "Reference",
    "RetryPolicy",
    "dependencies",
    "load_plan",
    "mermaid",
    "parse_plan",
    "plan_problems",
    "resolve",
    "topological_order",
]
