"""The tool model: descriptors, calls and results, in the JSON shapes the API speaks."""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from enum import StrEnum
from typing import Any, Self

import jsonschema
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from toolrun.errors import InvalidDescriptor
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.tools.semver import Version
from toolrun.tools.validation import argument_errors, validator_for

# snake_case, optionally namespaced once: read, weather.forecast (an imported MCP tool).
_NAME = re.compile(r"^(?=.{1,64}$)[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?$")
MIN_EXAMPLES = 3
# The validation context of the built-in descriptors: their schemas are not checked against
# the meta-schema (about 1.3 ms each, on every import); tests/tools/test_builtin_descriptors.py
# checks them in full instead.
# Schema keywords model APIs refuse at the top of a tool's parameters.
_NOT_AT_THE_TOP = frozenset({"allOf", "anyOf", "oneOf", "not", "if", "then", "else"})
_BUILTIN = object()


class ToolExample(BaseModel):
    """One documented way to call a tool; validated against the tool's parameters."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field(min_length=1)
    arguments: dict[str, Any]


class ToolDescriptor(BaseModel):
    """Everything an agent or operator needs to know about a tool, without running it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str
    description: str = Field(min_length=1)
    parameters: dict[str, Any]
    returns: dict[str, Any]
    examples: list[ToolExample]
    notes: list[str] = Field(default_factory=list)
    permission: PermissionLevel
    risk: Risk = Risk.LOW
    tags: list[str] = Field(default_factory=list)
    category: str = "general"
    time_limit_s: float = Field(10.0, gt=0)
    requires_confirmation: bool = False
    # Running it twice has no effect beyond running it once (it only reads). A call whose
    # worker was lost after it started runs again only then; otherwise it ends as an
    # error saying its effects are unknown (docs/delivery.md).
    repeat_safe: bool = False
    # The MCP server a gateway tool was imported from; such a tool comes with no examples.
    imported_from: str | None = None

    @classmethod
    def parse(cls, data: object) -> ToolDescriptor:
        """Build a descriptor from its JSON form (a plugin's descriptor file, an API body).

        Raises:
            InvalidDescriptor: every problem, one per line, each with where it is.
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = [
                f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}"
                for error in exc.errors()
            ]
            raise InvalidDescriptor("invalid tool descriptor:\n" + "\n".join(problems)) from exc

    @classmethod
    def builtin(cls, **fields: Any) -> ToolDescriptor:
        """A built-in tool's descriptor: checked like any other except for its schemas
        against the JSON Schema meta-schema, which the test suite checks instead. Never
        for a descriptor from elsewhere (a plugin, a tool pack, the API)."""
        return cls.model_validate(fields, context=_BUILTIN)

    def api_parameters(self) -> dict[str, Any]:
        """The parameters as model APIs and MCP clients take them: without the top-level
        combinators and conditionals (`allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/
        `else`), which Anthropic's and OpenAI's tool APIs refuse there. What they say is
        still checked: toolrun validates every call against the whole schema."""
        return {k: v for k, v in self.parameters.items() if k not in _NOT_AT_THE_TOP}

    @property
    def tool_id(self) -> str:
        """Unique id in a registry: ``name@version``."""
        return f"{self.name}@{self.version}"

    @property
    def semver(self) -> Version:
        return Version.parse(self.version)

    @field_validator("name")
    @classmethod
    def _check_name(cls, name: str) -> str:
        if not _NAME.fullmatch(name):
            raise ValueError(
                f"tool name {name!r} must be lowercase letters, digits and '_', "
                "starting with a letter, optionally after a namespace and '.' "
                "(at most 64 characters)"
            )
        return name

    @field_validator("version")
    @classmethod
    def _check_version(cls, version: str) -> str:
        Version.parse(version)
        return version

    @field_validator("parameters", "returns")
    @classmethod
    def _check_schema(cls, schema: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        if info.context is _BUILTIN:
            return schema
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
            raise ValueError(
                f"not a valid JSON Schema (Draft 2020-12) at {where}: {exc.message}"
            ) from exc
        return schema

    @model_validator(mode="after")
    def _check_parameters_and_examples(self) -> Self:
        if self.parameters.get("type") != "object":
            raise ValueError('parameters must be a JSON Schema with "type": "object"')
        if len(self.examples) < MIN_EXAMPLES and self.imported_from is None:
            raise ValueError(
                f"at least {MIN_EXAMPLES} examples are required, got {len(self.examples)}"
            )
        validator = validator_for(self.parameters)
        for index, example in enumerate(self.examples, start=1):
            problems = argument_errors(validator, example.arguments)
            if problems:
                raise ValueError(
                    f"example {index} ({example.description!r}) is invalid: {problems}"
                )
        return self


class ToolStatus(StrEnum):
    """Where a call is: waiting (queued, running, awaiting_approval) or how it ended."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCESS = "success"
    ERROR = "error"
    BLOCKED = "blocked"
    TIMEOUT = "timeout"
    AWAITING_APPROVAL = "awaiting_approval"
    DENIED = "denied"
    CANCELLED = "cancelled"


class ToolCall(BaseModel):
    """A request to run one tool with arguments."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=128)
    tool_name: str = Field(min_length=1)
    version: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    agent_id: str | None = None
    # A call made by a sub-agent (the Task tool) on behalf of `agent_id`: which one, and
    # the Task call it belongs to.
    subagent: str | None = None
    parent_call_id: str | None = None

    def lineage(self) -> dict[str, str]:
        """The sub-agent and parent call facts of a delegated call, for its metadata."""
        return lineage_of({name: getattr(self, name) for name in LINEAGE})

    def digest(self) -> str:
        """What the call asks for, as a hash of everything but its id: a call sent again
        under its id is the same request when its digest is the same."""
        asked = self.model_dump(mode="json", exclude={"id"})
        canonical = json.dumps(asked, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()


# The metadata of a call made by a sub-agent: which one, and for which Task call.
LINEAGE = ("subagent", "parent_call_id")


def lineage_of(facts: dict[str, Any]) -> dict[str, str]:
    """The LINEAGE entries of `facts` (a call's fields or a result's metadata) that are set."""
    return {name: facts[name] for name in LINEAGE if facts.get(name) is not None}


class ToolResult(BaseModel):
    """The outcome of a call; `metadata` always carries execution_time_ms."""

    call_id: str
    tool_name: str
    tool_version: str | None = None
    status: ToolStatus
    output: Any = None
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def accepted(cls, call: ToolCall, status: ToolStatus, **metadata: Any) -> ToolResult:
        """The first state of a call just accepted (queued, parked, or refused at once)."""
        return cls(
            call_id=call.id,
            tool_name=call.tool_name,
            tool_version=call.version,
            status=status,
            metadata={
                "queued_at": time.time(),
                "execution_time_ms": None,
                "agent_id": call.agent_id,
                **call.lineage(),
                **metadata,
            },
        )

    @property
    def ok(self) -> bool:
        return self.status is ToolStatus.SUCCESS

    @property
    def final(self) -> bool:
        """True once the call has ended; queued, running and awaiting_approval are not."""
        return self.status not in _PENDING


_PENDING = {ToolStatus.QUEUED, ToolStatus.RUNNING, ToolStatus.AWAITING_APPROVAL}
