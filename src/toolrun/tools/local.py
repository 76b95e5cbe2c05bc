"""One call run in this process, as `toolrun call --local` and `toolrun mcp --local` do:
the registry's tools, the workspace sandbox and jail, sub-agents run here too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from toolrun.config import Settings
from toolrun.permissions.approvals import Approver
from toolrun.sandbox.confinement import call_confinement
from toolrun.sandbox.proxy import Refusal
from toolrun.subagents.delegation import LocalDelegation
from toolrun.tools.base import ToolContext
from toolrun.tools.executor import Executor
from toolrun.tools.model import ToolCall, ToolResult
from toolrun.tools.registry import ToolRegistry


def run_local(
    settings: Settings,
    registry: ToolRegistry,
    call: ToolCall,
    *,
    workspace: Path | None,
    approver: Approver,
    on_refused: Callable[[Refusal], None],
) -> ToolResult:
    """Run `call` here; `on_refused` hears of each connection the network jail refused.

    Raises:
        SandboxViolation: the workspace cannot be used.
    """
    with call_confinement(settings, on_refused) as jail:
        executor = Executor(registry)
        # Sub-agents of a local task: defined in the workspace, run in this process.
        delegation = LocalDelegation(registry, None, executor=executor)
        ctx = ToolContext.create(
            settings,
            workspace=workspace,
            approver=approver,
            jail=jail,
            call_id=call.id,
            delegation=delegation,
        )
        return executor.execute(call, ctx)
