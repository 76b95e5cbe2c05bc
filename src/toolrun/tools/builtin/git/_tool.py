"""What every git tool shares: its descriptor's frame and opening the repository."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Concern, Risk
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.builtin.git._repo import TIME_LIMIT_S, Repository, revision
from toolrun.tools.model import ToolDescriptor, ToolExample

REPO = {
    "type": "string",
    "description": "A directory inside the repository (default: the workspace root).",
}
PATHS = {
    "type": "array",
    "items": {"type": "string", "minLength": 1},
    "description": "Workspace paths to limit it to (taken literally, never as options).",
}
SAFETY_NOTE = (
    "Arguments are never read as git options; no hooks, pager, editor, fsmonitor, external "
    "diff or textconv run, and a repository whose config names commands is refused."
)


def describe(
    name: str,
    description: str,
    *,
    properties: dict[str, Any],
    returns: dict[str, Any],
    examples: list[tuple[str, dict[str, Any]]],
    permission: PermissionLevel,
    required: tuple[str, ...] = (),
    notes: tuple[str, ...] = (),
) -> ToolDescriptor:
    """A git tool's descriptor; admin tools are high risk and always wait for approval."""
    admin = permission is PermissionLevel.ADMIN
    return ToolDescriptor.builtin(
        name=name,
        version="1.0.0",
        description=description,
        parameters={
            "type": "object",
            "properties": {**properties, "repo": REPO},
            "required": list(required),
            "additionalProperties": False,
        },
        returns={"type": "object", "properties": returns},
        examples=[ToolExample(description=text, arguments=args) for text, args in examples],
        notes=[*notes, SAFETY_NOTE],
        permission=permission,
        risk=Risk.HIGH if admin else Risk.LOW,
        requires_confirmation=admin,
        repeat_safe=permission is PermissionLevel.READ_ONLY,  # status, log, diff, show…
        tags=["git", "vcs"],
        category="version_control",
        time_limit_s=TIME_LIMIT_S + 5,
    )


class GitTool(Tool):
    """Opens the repository, then `git` does the tool's work."""

    # Arguments that name revisions or refs: checked before the call is even considered
    # for approval, so that nobody is asked to approve an option injection.
    revision_arguments: tuple[str, ...] = ()

    def assess(self, arguments: dict[str, Any], ctx: ToolContext) -> Concern | None:
        for key in self.revision_arguments:
            if key in arguments:
                revision(arguments[key], key)
        return super().assess(arguments, ctx)

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(self.git(Repository.open(ctx, arguments.get("repo")), arguments))

    @abstractmethod
    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's output."""
