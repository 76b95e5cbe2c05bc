"""A sub-agent definition: a Markdown file whose YAML front matter says who the sub-agent
is and what it may use, and whose body is its system prompt.

    ---
    name: searcher
    description: Finds where things are in the code base; never changes anything.
    tools: [grep, glob, read, tag:search]   # or "all" (the default)
    ceiling: read_only                      # the default
    model: qwen2.5-coder                    # default: TOOLRUN_MODEL
    max_turns: 8                            # the default is 10
    ---
    You are a code search assistant. ...

Light to import (the Task tool's descriptor names AGENTS_DIR): YAML and the agent
profiles, which bring the database's models, are imported where they are used.
"""

# ruff: noqa: PLC0415 - see the module docstring

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from toolrun.errors import ToolrunError
from toolrun.permissions.levels import PermissionLevel

if TYPE_CHECKING:
    from toolrun.tools.model import ToolDescriptor

# Where a workspace keeps its sub-agent definitions, one NAME.md each.
AGENTS_DIR = ".toolrun/agents"
ALL_TOOLS = "all"
MAX_DEFINITION_BYTES = 256 * 1024
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S | re.M)
_NAME = r"^[a-z0-9][a-z0-9_.-]{0,63}$"


class SubAgentError(ToolrunError):
    """A definition that cannot be read, or a sub-agent that is not there."""


class SubAgent(BaseModel):
    """Who a sub-agent is, what it may use, and how long it may go on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=_NAME, description="Lowercase letters, digits, '_', '.', '-'.")
    description: str = Field(min_length=1, max_length=2000)
    prompt: str = Field(min_length=1, max_length=MAX_DEFINITION_BYTES, description="System prompt.")
    tools: list[str] | None = Field(
        None, description='Tool names and "tag:<tag>" entries; null (or "all"): every tool.'
    )
    ceiling: PermissionLevel = Field(
        PermissionLevel.READ_ONLY, description="Never above the calling agent's, whatever it says."
    )
    model: str | None = Field(None, min_length=1, description="Default: TOOLRUN_MODEL.")
    max_turns: int = Field(10, ge=1, le=100, description="Model replies before it must answer.")

    @field_validator("tools", mode="before")
    @classmethod
    def _all_or_list(cls, tools: Any) -> Any:
        """``all`` means every tool; ``grep, read`` (one string, as many agents write it) is
        a list."""
        if isinstance(tools, str):
            if tools.strip() == ALL_TOOLS:
                return None
            return [name.strip() for name in tools.split(",") if name.strip()]
        return tools

    @field_validator("tools")
    @classmethod
    def _check_tools(cls, tools: list[str] | None) -> list[str] | None:
        if tools is not None and any(not name.strip() for name in tools):
            raise ValueError("tool entries must not be empty")
        return tools

    def sees(self, descriptor: ToolDescriptor) -> bool:
        """True when the tool is in this sub-agent's own filter (by name or tag)."""
        from toolrun.permissions.agents import in_tool_set

        return in_tool_set(None if self.tools is None else frozenset(self.tools), descriptor)

    @classmethod
    def parse(cls, data: object, source: str) -> SubAgent:
        """Build a definition from its fields.

        Raises:
            SubAgentError: every problem, each with the field it is in and `source`.
        """
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or '(root)'}: {error['msg']}"
                for error in exc.errors()
            )
            raise SubAgentError(f"{source}: invalid sub-agent definition: {problems}") from exc


def parse_markdown(text: str, source: str) -> SubAgent:
    """A definition from Markdown with YAML front matter (see the module docstring).

    Raises:
        SubAgentError: no front matter, bad YAML, unknown or invalid fields.
    """
    import yaml

    if len(text.encode()) > MAX_DEFINITION_BYTES:
        raise SubAgentError(f"{source}: larger than {MAX_DEFINITION_BYTES // 1024} KiB")
    found = _FRONT_MATTER.match(text)
    if found is None:
        raise SubAgentError(
            f"{source}: a sub-agent definition starts with YAML front matter between "
            "'---' lines, followed by the system prompt"
        )
    header, body = found.groups()
    try:
        fields = yaml.safe_load(header)
    except yaml.YAMLError as exc:
        raise SubAgentError(f"{source}: the front matter is not valid YAML: {exc}") from exc
    if not isinstance(fields, dict):
        raise SubAgentError(f"{source}: the front matter must be a YAML mapping of fields")
    if "prompt" in fields:
        raise SubAgentError(f"{source}: the system prompt is the body, not a 'prompt' field")
    return SubAgent.parse({**fields, "prompt": body.strip()}, source)


def to_markdown(agent: SubAgent) -> str:
    """The definition as a Markdown file that `parse_markdown` reads back unchanged."""
    import yaml

    fields = agent.model_dump(mode="json", exclude={"prompt"}, exclude_none=True)
    if agent.tools is None:
        fields["tools"] = ALL_TOOLS
    header = yaml.safe_dump(fields, sort_keys=False, allow_unicode=True)
    return f"---\n{header}---\n{agent.prompt}\n"
