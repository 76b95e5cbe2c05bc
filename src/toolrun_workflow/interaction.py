"""Interaction and delivery: feedback for the next stage, moving between stages, and
copying the iteration's work into the project (confirmed, approved, allowlisted)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from toolrun.errors import SandboxViolation, ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Risk
from toolrun.sandbox.fs import read_bytes, write_bytes_atomic
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun_workflow.base import changing, descriptor, new_record, read_records
from toolrun_workflow.files import Folder
from toolrun_workflow.iterations import (
    ROOT,
    STAGES,
    TRANSITIONS,
    WORK,
    current_iteration,
    store_for,
)

FEEDBACK = "data/feedback.json"
COPIED_EXTENSIONS = frozenset(
    [
        ".py",
        ".pyi",
        ".md",
        ".txt",
        ".rst",
        ".json",
        ".toml",
        ".yaml",
        ".yml",
        ".cfg",
        ".ini",
        ".js",
        ".ts",
        ".tsx",
        ".jsx",
        ".css",
        ".html",
        ".sql",
        ".sh",
        ".go",
        ".rs",
        ".java",
        ".c",
        ".h",
    ]
)


def feedback_for(folder: Folder, stage: str) -> list[dict[str, Any]]:
    """The feedback left for `stage` (shown by get_iteration; a hand-edited entry without
    a stage is nobody's)."""
    return [f for f in read_records(folder, FEEDBACK) if f.get("for_stage") == stage]


class ProvideFeedback(Tool):
    descriptor = descriptor(
        "provide_feedback",
        "Leave feedback for a stage (default: the next one): get_iteration shows it to "
        "whoever works in that stage.",
        {
            "message": {"type": "string", "minLength": 1, "maxLength": 10_000},
            "for_stage": {"enum": list(STAGES)},
        },
        [
            ("For the next stage", {"message": "The PRD lacks error cases."}),
            ("Back to design", {"message": "The exporter needs streaming.", "for_stage": "design"}),
            ("For delivery", {"message": "Mention the migration.", "for_stage": "delivery"}),
        ],
        required=("message",),
        group="interaction",
        permission=PermissionLevel.READ_WRITE,
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, folder = current_iteration(ctx)
        following = STAGES[min(STAGES.index(iteration.stage) + 1, len(STAGES) - 1)]
        record = new_record(
            "fb",
            {
                "message": arguments["message"],
                "from_stage": iteration.stage,
                "for_stage": arguments.get("for_stage", following),
            },
        )
        with changing(folder, FEEDBACK) as records:
            records.append(record)
        return ToolOutput(record)


class GotoStage(Tool):
    descriptor = descriptor(
        "goto_stage",
        "Move the current iteration to another stage: the next one, or the one before to "
        "rework it; other moves are refused with the allowed ones.",
        {"stage": {"enum": list(STAGES)}},
        [
            ("On to the PRD", {"stage": "prd"}),
            ("Back to design", {"stage": "design"}),
            ("To delivery", {"stage": "delivery"}),
        ],
        required=("stage",),
        group="interaction",
        permission=PermissionLevel.READ_WRITE,
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, folder = current_iteration(ctx)
        moved = store_for(ctx).move(iteration.id, arguments["stage"])
        return ToolOutput(
            {
                "iteration": moved.id,
                "from": iteration.stage,
                "stage": moved.stage,
                "next": sorted(TRANSITIONS[moved.stage]),
                "feedback": feedback_for(folder, moved.stage),
            }
        )


class CopyWorkspaceToProject(Tool):
    descriptor = descriptor(
        "copy_workspace_to_project",
        f"Copy the iteration's {WORK}/ directory into the project (the platform's "
        "workspace root), files of allowlisted extensions only (source, docs, config), "
        "each written to a temporary file and renamed into place, never outside the "
        "project nor through a symbolic link; other files, links, dot-files and "
        "dot-directories (.git, .github…) are listed as skipped. Needs `confirm: true` "
        "and an operator's approval.",
        {
            "confirm": {"const": True, "description": "Must be true."},
            "target": {
                "type": "string",
                "minLength": 1,
                "description": "A directory of the project to copy into (default: its root).",
            },
        },
        [
            ("Deliver into the project root", {"confirm": True}),
            ("Deliver into src/", {"confirm": True, "target": "src"}),
            ("Deliver into a new folder", {"confirm": True, "target": "contrib/export"}),
        ],
        required=("confirm",),
        group="delivery",
        permission=PermissionLevel.ADMIN,
        risk=Risk.HIGH,
        requires_confirmation=True,
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, folder = current_iteration(ctx)
        source = folder.path(WORK)  # a symbolic link is refused
        if not source.is_dir():
            raise ToolExecutionError(f"iteration {iteration.id} has no {WORK}/ directory to copy")
        project = Folder.top(ctx.workspace)
        target = project.path(arguments.get("target", "."))  # confined, through no link
        if target.is_relative_to(project.root / ROOT):
            raise SandboxViolation("the target must be in the project, not in an iteration")
        copies, skipped = _planned(project, source, target)
        copied = []
        for path, destination in copies:
            data, _ = read_bytes(ctx.workspace, path)
            # A temporary file beside the destination, then a rename: never half a file.
            write_bytes_atomic(ctx.workspace, destination, data)
            copied.append(project.display(destination))
        return ToolOutput({"iteration": iteration.id, "copied": copied, "skipped": skipped})


def _planned(
    project: Folder, source: Path, target: Path
) -> tuple[list[tuple[Path, Path]], list[str]]:
    """What to copy where, and what to skip (links, dot-files and dot-directories such as
    .git or .github, files of other extensions). Every destination is checked before
    anything is copied.

    Raises:
        SandboxViolation: a destination, or a directory on its way, is a symbolic link.
        ToolExecutionError: a destination is a directory.
    """
    copies: list[tuple[Path, Path]] = []
    skipped: list[str] = []
    for root, dirs, names in os.walk(source):
        here = Path(root)
        kept = []
        for name in sorted(dirs):
            if name.startswith(".") or (here / name).is_symlink():
                skipped.append(f"{(here / name).relative_to(source)}/")
            else:
                kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            path = here / name
            relative = path.relative_to(source)
            hidden = name.startswith(".")
            if hidden or path.is_symlink() or path.suffix.lower() not in COPIED_EXTENSIONS:
                skipped.append(str(relative))
                continue
            destination = project.path(str(target.relative_to(project.root) / relative))
            if destination.is_dir():
                raise ToolExecutionError(
                    f"{project.display(destination)} is a directory: nothing was copied"
                )
            copies.append((path, destination))
    return copies, skipped


def interaction_tools() -> list[Tool]:
    return [ProvideFeedback(), GotoStage(), CopyWorkspaceToProject()]
