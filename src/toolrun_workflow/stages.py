"""Stage scoping: the tools an agent working in each stage may call. Enforced as the
tool set of that stage's agent profile:

    toolrun agents create coder --ceiling execute \
        --tools "$(python -m toolrun_workflow.stages coding)"

so a coding-stage agent cannot call save_prd_doc (the API refuses it, 403)."""

from __future__ import annotations

import sys

from toolrun_workflow.iterations import STAGES

EVERY_STAGE = (
    "get_iteration", "goto_stage", "provide_feedback", "list_files",
    "query_memory", "save_insight", "save_learning", "save_issue",
)  # fmt: skip
STAGE_TOOLS: dict[str, tuple[str, ...]] = {
    "idea": ("start_iteration", "save_idea", "load_idea"),
    "prd": (
        "load_idea", "save_prd_doc", "load_prd_doc", "create_requirement",
        "update_requirement", "delete_requirement", "get_requirements",
    ),
    "design": (
        "load_prd_doc", "get_requirements", "save_design_doc", "load_design_doc",
        "create_design_component", "get_design", "add_feature", "update_feature_status",
    ),
    "plan": (
        "load_design_doc", "get_design", "get_requirements", "save_plan_doc",
        "load_plan_doc", "create_task", "get_plan", "check_feature_coverage",
        "check_task_dependencies",
    ),
    "coding": (
        "load_design_doc", "load_plan_doc", "get_design", "get_plan", "update_task_status",
        "update_feature_status", "run_command", "check_tests", "check_lint",
    ),
    "check": (
        "get_plan", "get_requirements", "check_tests", "check_lint",
        "check_feature_coverage", "check_task_dependencies", "check_data_format",
    ),
    "delivery": (
        "get_plan", "get_requirements", "check_data_format", "save_delivery_report",
        "load_delivery_report", "copy_workspace_to_project",
    ),
}  # fmt: skip


def stage_tools(stage: str) -> list[str]:
    """The tools of `stage`, sorted.

    Raises:
        KeyError: not a stage.
    """
    return sorted({*EVERY_STAGE, *STAGE_TOOLS[stage]})


def main(argv: list[str]) -> int:
    """`python -m toolrun_workflow.stages STAGE`: the stage's tools, comma-separated."""
    if len(argv) != 1 or argv[0] not in STAGES:
        sys.stderr.write(f"usage: python -m toolrun_workflow.stages {{{'|'.join(STAGES)}}}\n")
        return 2
    sys.stdout.write(",".join(stage_tools(argv[0])) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
