"""Artifact tools: the iteration's documents (idea.md, prd.md, design.md, plan.md,
delivery.md), saved (atomically) and loaded in its directory, never through a symbolic
link; and starting an iteration."""

from __future__ import annotations

from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun_workflow.base import descriptor
from toolrun_workflow.files import Folder
from toolrun_workflow.interaction import feedback_for
from toolrun_workflow.iterations import STAGES, WORK, current_iteration, store_for

MAX_DOCUMENT = 1_000_000  # characters

_CONTENT = {"type": "string", "maxLength": MAX_DOCUMENT, "description": "Markdown text."}


class StartIteration(Tool):
    descriptor = descriptor(
        "start_iteration",
        "Start a new iteration of the staged pipeline (at the idea stage) and make it the "
        "current one: every workflow tool works in its directory. `test_command` and "
        "`lint_command` are what check_tests and check_lint run in its workspace/ "
        "subdirectory (where the code goes).",
        {
            "name": {"type": "string", "minLength": 1, "maxLength": 200},
            "test_command": {"type": "string", "minLength": 1, "maxLength": 2000},
            "lint_command": {"type": "string", "minLength": 1, "maxLength": 2000},
        },
        [
            ("A new feature", {"name": "export to CSV", "test_command": "python3 -m pytest -q"}),
            ("A bug-fix round", {"name": "fix login timeouts", "lint_command": "ruff check ."}),
            ("A spike", {"name": "try a new parser"}),
        ],
        required=("name",),
        group="iteration",
        permission=PermissionLevel.READ_WRITE,
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        started = store_for(ctx).start(
            arguments["name"], arguments.get("test_command"), arguments.get("lint_command")
        )
        Folder.top(ctx.workspace).folder(str(started.directory / WORK))
        return ToolOutput(_described(started))


class GetIteration(Tool):
    descriptor = descriptor(
        "get_iteration",
        "The current iteration: its id, name, stage, directory, the stages of the pipeline "
        "and the feedback left for its stage.",
        {},
        [("The current iteration", {}), ("Which stage we are in", {}), ("Where files go", {})],
        group="iteration",
    )

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, folder = current_iteration(ctx)
        return ToolOutput(
            {
                **_described(iteration),
                "stages": list(STAGES),
                "feedback": feedback_for(folder, iteration.stage),
            }
        )


def _described(iteration: Any) -> dict[str, Any]:
    return {
        "id": iteration.id,
        "name": iteration.name,
        "stage": iteration.stage,
        "directory": str(iteration.directory),
    }


class SaveDocument(Tool):
    """Writes one of the iteration's documents (replacing it)."""

    def __init__(self, name: str, filename: str, what: str) -> None:
        self.filename = filename
        self.descriptor = descriptor(
            name,
            f"Save the iteration's {what} as {filename} (Markdown), replacing the earlier one.",
            {"content": _CONTENT},
            [
                (f"A first {what}", {"content": f"# {what.title()}\n\nFirst draft."}),
                (f"A revised {what}", {"content": f"# {what.title()}\n\n- revised"}),
                (f"An empty {what} to fill later", {"content": ""}),
            ],
            required=("content",),
            group="artifact",
            permission=PermissionLevel.READ_WRITE,
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, folder = current_iteration(ctx)
        folder.write_text(self.filename, arguments["content"])
        return ToolOutput(
            {
                "iteration": iteration.id,
                "path": str(iteration.directory / self.filename),
                "characters": len(arguments["content"]),
            }
        )


class LoadDocument(Tool):
    """Reads one of the iteration's documents."""

    def __init__(self, name: str, filename: str, what: str) -> None:
        self.filename = filename
        self.descriptor = descriptor(
            name,
            f"Load the iteration's {what} ({filename}); an error if it was never saved.",
            {},
            [
                (f"The {what}", {}),
                (f"The {what} before revising it", {}),
                (f"Check the {what}", {}),
            ],
            group="artifact",
        )
        super().__init__()

    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        iteration, folder = current_iteration(ctx)
        content = folder.read_text(self.filename)
        if content is None:
            raise ToolExecutionError(f"no {self.filename} in iteration {iteration.id} yet")
        return ToolOutput(
            {
                "iteration": iteration.id,
                "path": str(iteration.directory / self.filename),
                "content": content,
            }
        )


DOCUMENTS = {
    "idea": ("idea.md", "idea"),
    "prd_doc": ("prd.md", "product requirements document"),
    "design_doc": ("design.md", "design document"),
    "plan_doc": ("plan.md", "plan"),
    "delivery_report": ("delivery.md", "delivery report"),
}


def artifact_tools() -> list[Tool]:
    saves: list[Tool] = [SaveDocument(f"save_{key}", *DOCUMENTS[key]) for key in DOCUMENTS]
    loads: list[Tool] = [LoadDocument(f"load_{key}", *DOCUMENTS[key]) for key in DOCUMENTS]
    return [StartIteration(), GetIteration(), *saves, *loads]
