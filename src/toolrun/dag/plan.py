"""The plan format: nodes (tool calls) with dependencies and failure policies.

A plan is JSON or YAML::

    max_concurrency: 4                 # optional: nodes of this run running at once
    policy:                            # optional: defaults for every node
      on_failure: stop                 # stop | skip | retry
      retry: {max_attempts: 3, initial_delay: 1, backoff: 2, max_delay: 30, jitter: 0.1,
              on_exhausted: stop}
      timeout_s: 60
    nodes:
      - id: find
        tool: glob
        arguments: {pattern: "**/*.py"}
      - id: first
        tool: read
        arguments: {file_path: {$ref: "find.output.files[0]"}}  # see toolrun.dag.refs
        depends_on: [other_node]       # order without data
        on_failure: retry
"""

from __future__ import annotations

import json
import random
from enum import StrEnum
from functools import cached_property
from pathlib import Path
from typing import Any, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from toolrun.dag.refs import dotted
from toolrun.errors import ToolrunError

NODE_ID_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
MAX_NODES = 10_000


class PlanError(ToolrunError):
    """A plan that cannot run; `problems` lists every reason, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid plan: " + "; ".join(problems))
        self.problems = problems


class FailurePolicy(StrEnum):
    """What a node's failure does to the run."""

    STOP = "stop"  # cancel what has not started, fail the run
    SKIP = "skip"  # skip the node's descendants; independent branches go on
    RETRY = "retry"  # run it again per its RetryPolicy, then stop or skip


class RetryPolicy(BaseModel):
    """Temporal's shape: attempts, a delay growing by `backoff` up to `max_delay`, jitter."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(3, ge=1, le=100, description="Attempts in all, the first included.")
    initial_delay: float = Field(1.0, ge=0, le=86_400, description="Seconds before attempt 2.")
    backoff: float = Field(2.0, ge=1, le=100, description="Each delay is the last times this.")
    max_delay: float = Field(60.0, ge=0, le=86_400, description="Seconds; the delay's cap.")
    jitter: float = Field(0.1, ge=0, le=1, description="Up to this fraction is added at random.")
    on_exhausted: FailurePolicy = Field(
        FailurePolicy.STOP, description="stop or skip once the attempts are spent."
    )

    @model_validator(mode="after")
    def _check_exhausted(self) -> Self:
        if self.on_exhausted is FailurePolicy.RETRY:
            raise ValueError("on_exhausted must be stop or skip")
        return self

    def delay_s(self, failed_attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after attempt number `failed_attempt` (1-based) failed."""
        base = min(self.initial_delay * self.backoff ** (failed_attempt - 1), self.max_delay)
        return base * (1 + self.jitter * (rng or random).random())


class NodePolicy(BaseModel):
    """Plan-wide defaults for the nodes that do not set their own."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    on_failure: FailurePolicy = FailurePolicy.STOP
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    timeout_s: float | None = Field(None, gt=0, le=86_400)


class Node(BaseModel):
    """One tool call of a plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=NODE_ID_PATTERN)
    tool: str = Field(min_length=1, max_length=64)
    version: str | None = Field(None, max_length=64, description="Exact version or a range.")
    arguments: dict[str, Any] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)
    on_failure: FailurePolicy | None = None
    retry: RetryPolicy | None = None
    timeout_s: float | None = Field(None, gt=0, le=86_400)


class Plan(BaseModel):
    """Nodes, plan-wide policy and a concurrency limit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: list[Node] = Field(min_length=1, max_length=MAX_NODES)
    policy: NodePolicy = Field(default_factory=NodePolicy)
    max_concurrency: int | None = Field(None, ge=1, le=10_000)

    def node(self, node_id: str) -> Node:
        return self._by_id[node_id]

    @cached_property
    def _by_id(self) -> dict[str, Node]:
        return {node.id: node for node in self.nodes}

    def on_failure(self, node: Node) -> FailurePolicy:
        return node.on_failure or self.policy.on_failure

    def retry(self, node: Node) -> RetryPolicy:
        return node.retry or self.policy.retry

    def timeout_s(self, node: Node) -> float | None:
        return node.timeout_s or self.policy.timeout_s


def parse_plan(data: object) -> Plan:
    """A plan from its decoded JSON/YAML form.

    Raises:
        PlanError: every problem, each with where it is (``nodes[2].retry.backoff: ...``).
    """
    try:
        return Plan.model_validate(data)
    except ValidationError as exc:
        raise PlanError([_located(error) for error in exc.errors()]) from exc


def load_plan(text: str, *, name: str = "plan") -> Plan:
    """A plan from JSON or YAML text (`name` ending in .json: JSON only).

    Raises:
        PlanError: the text does not parse, or the plan is malformed.
    """
    try:
        data = json.loads(text) if Path(name).suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise PlanError([f"{name} is not valid {_format_of(name)}: {_first_line(exc)}"]) from exc
    return parse_plan(data)


def _located(error: Any) -> str:
    location = dotted(error["loc"])
    message = error["msg"]
    if error["type"] == "extra_forbidden":
        message = "unknown field"
    return f"{location}: {message}" if location else message


def _format_of(name: str) -> str:
    return "JSON" if Path(name).suffix == ".json" else "YAML or JSON"


def _first_line(exc: Exception) -> str:
    """Where and what, on one line: ``line 4, column 9: expected ',' or '}'``."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem_mark is not None:
        mark = exc.problem_mark
        return f"line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    return " ".join(str(exc).split())
