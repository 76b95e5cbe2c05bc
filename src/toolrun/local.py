"""One call run in this process, as `toolrun call --local` and `toolrun mcp --local` do:
the registry's tools, the workspace sandbox and jail, sub-agents run here too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from toolrun.config import Settings
from toolrun.permissions.approvals import Approver
from toolrun.sandbox.confinement import call_confinement
from toolrun.sandbox.proxy import Refusal
from toolrun.tools.base import ToolContext
from toolrun.tools.executor import Executor
from toolrun.tools.model import ToolCall, ToolDescriptor, ToolResult
from toolrun.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from toolrun.permissions.agents import AgentProfile
    from toolrun.sandbox.confinement import Confinement
    from toolrun.sandbox.paths import Workspace
    from toolrun.subagents.catalog import SubAgentCatalog
    from toolrun.tools.delegating import Delegating


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

    A call of a tool that starts no process (`Tool.starts_processes`), or of no tool (an
    unknown name), runs without the jail, whose set-up costs more than such a call: its
    context's runner refuses to start any process.

    Raises:
        SandboxViolation: the workspace cannot be used.
    """
    executor = Executor(registry)

    def execute(jail: Confinement | None, *, processes: bool) -> ToolResult:
        ctx = ToolContext.create(
            settings,
            workspace=workspace,
            approver=approver,
            jail=jail,
            call_id=call.id,
            delegation=_LocalDelegationOnUse(registry, executor),
            processes=processes,
        )
        return executor.execute(call, ctx)

    tool = registry.get(call.tool_name, call.version)
    if tool is None or not tool.starts_processes:
        return execute(None, processes=False)
    with call_confinement(settings, on_refused) as jail:
        return execute(jail, processes=True)


class _LocalDelegationOnUse:
    """The `LocalDelegation` of sub-agents run here, imported and built when a Task call
    first delegates: it brings the platform's call lifecycle (Redis, the history
    database), which no other local call needs and which takes long to import."""

    def __init__(self, registry: ToolRegistry, executor: Executor) -> None:
        self._registry = registry
        self._executor = executor
        self._delegation: Delegating | None = None

    def _made(self) -> Delegating:
        if self._delegation is None:
            from toolrun.subagents.delegation import LocalDelegation  # noqa: PLC0415

            # Sub-agents of a local task: defined in the workspace, run in this process.
            self._delegation = LocalDelegation(self._registry, None, executor=self._executor)
        return self._delegation

    def catalog(self, workspace: Workspace) -> SubAgentCatalog:
        return self._made().catalog(workspace)

    def tools(self) -> list[ToolDescriptor]:
        return self._made().tools()

    def parent(self, agent_id: str | None) -> AgentProfile | None:
        return self._made().parent(agent_id)

    def run(
        self, calls: list[ToolCall], agent: AgentProfile, deadline: float, ctx: ToolContext
    ) -> list[ToolResult]:
        return self._made().run(calls, agent, deadline, ctx)
