"""What a tool is: a descriptor plus `run`, and the context a run gets."""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from toolrun.config import Settings
from toolrun.permissions.approvals import Approver, DenyApprover
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.policy import Concern, Policy, Verdict, verdict_for
from toolrun.sandbox.confinement import Confinement
from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.paths import Workspace
from toolrun.sandbox.runner import ProcessRunner, sandbox_env
from toolrun.sandbox.view import platform_code
from toolrun.tools.delegating import Delegating
from toolrun.tools.model import ToolDescriptor
from toolrun.tools.validation import validator_for

_NO_PROCESSES = "this tool declared that it starts no process (Tool.starts_processes)"


@dataclass(frozen=True)
class FileStamp:
    """What a file looked like when an agent last read or wrote it."""

    mtime_ns: int
    size: int


@dataclass
class ToolContext:
    """Everything a tool may use: it never opens user paths or starts processes otherwise."""

    workspace: Workspace
    runner: ProcessRunner
    settings: Settings
    approver: Approver = field(default_factory=DenyApprover)
    # Files this agent session has seen, so writes can refuse files changed behind its back.
    file_stamps: dict[Path, FileStamp] = field(default_factory=dict)
    # The agent the call is made for (None: a local run, or a platform without agents).
    agent_id: str | None = None
    # The call being run, and how it may run calls of its own (the Task tool's sub-agent);
    # None where neither applies.
    call_id: str | None = None
    delegation: Delegating | None = None

    def for_level(self, level: PermissionLevel) -> ToolContext:
        """This context for a tool of `level`: a read_only tool's processes see the
        workspace read-only."""
        writable = level is not PermissionLevel.READ_ONLY
        if writable == self.runner.writable:
            return self
        return dataclasses.replace(self, runner=dataclasses.replace(self.runner, writable=writable))

    @classmethod
    def create(
        cls,
        settings: Settings,
        *,
        workspace: Path | None = None,
        approver: Approver | None = None,
        label: str = "",
        jail: Confinement | None = None,
        agent_id: str | None = None,
        call_id: str | None = None,
        delegation: Delegating | None = None,
        processes: bool = True,
    ) -> ToolContext:
        """A context for one agent session in `workspace` (default: the settings' one).

        `label` tags the subprocesses started in this context (see `tracking.kill_labelled`);
        `jail` confines them (None: unconfined, where the host cannot jail them).
        `processes=False`: its runner starts none (for a tool that declared it starts none,
        run without a jail), so such a tool cannot start one unconfined.
        """
        root = Path(workspace if workspace is not None else settings.workspace)
        space = _workspace(root.resolve(), platform_code(settings.rg_path))
        if jail is not None and jail.workspace != space.root:
            jail = jail.within(space.root)
        home = Path(jail.home) if jail is not None and jail.home else space.root
        env = sandbox_env(path=settings.sandbox_path, home=home)
        runner = ProcessRunner(
            cwd=space.root,
            env=env if jail is None else {**env, **jail.env()},
            limits=ResourceLimits(
                memory_bytes=settings.max_memory_bytes,
                file_size_bytes=settings.max_file_size_bytes,
                open_files=settings.max_open_files,
            ),
            kill_grace_s=settings.kill_grace_s,
            use_cgroups=settings.use_cgroups,
            label=label,
            jail=jail,
            max_processes=settings.sandbox_max_processes,
            refusal=None if processes else _NO_PROCESSES,
        )
        return cls(
            space,
            runner,
            settings,
            approver or DenyApprover(),
            agent_id=agent_id,
            call_id=call_id,
            delegation=delegation,
        )


@lru_cache(maxsize=64)
def _workspace(resolved: Path, protected: tuple[Path, ...]) -> Workspace:
    """The workspace whose root resolves to `resolved`, checked and built once per process
    (a worker's calls share it; a root moved by a link to elsewhere is a new one)."""
    return Workspace(resolved, protected=protected)


@dataclass(frozen=True)
class ToolOutput:
    """What a successful run returns; `metadata` is merged into the result's metadata."""

    output: Any
    metadata: dict[str, Any] = field(default_factory=dict)


class Tool(ABC):
    """A runnable tool. Subclasses set `descriptor` and implement `run`."""

    descriptor: ToolDescriptor
    # False: `run` never starts a process, so a local call needs no jail set up, and the
    # context's runner refuses to start one. Default True: it may.
    starts_processes: ClassVar[bool] = True

    def __init__(self) -> None:
        self.validator = validator_for(self.descriptor.parameters)

    def assess(self, arguments: dict[str, Any], ctx: ToolContext) -> Concern | None:
        """How risky this call is and why, or None when it is harmless (policy safe).

        Raises:
            SandboxViolation: the call must not run at all (e.g. a command off the allowlist).
        """
        if self.descriptor.requires_confirmation:
            name = self.descriptor.name
            return Concern(self.descriptor.risk, f"{name} requires confirmation")
        return None

    def verdict(self, arguments: dict[str, Any], ctx: ToolContext) -> Verdict:
        """The call's policy under the context's settings (see `permissions.policy`); a tool
        that requires confirmation is never safe."""
        verdict = verdict_for(
            self.descriptor.name,
            self.assess(arguments, ctx),
            risk_policy=ctx.settings.risk_policy,
            tool_floor=ctx.settings.tool_policies,
        )
        if self.descriptor.requires_confirmation and verdict.policy is Policy.SAFE:
            return dataclasses.replace(verdict, policy=Policy.CONFIRM)
        return verdict

    def machine(self, arguments: dict[str, Any]) -> str | None:
        """The machine (`Settings.machine_id`) whose workers must run this call, because
        state it needs is kept there (a terminal session); None: any worker of its level."""
        return None

    def queue(self, arguments: dict[str, Any]) -> str:
        """The broker queue for this call: its level's, or its level's on `machine`."""
        machine = self.machine(arguments)
        level = self.descriptor.permission
        return level.queue_name if machine is None else level.machine_queue(machine)

    def stranded(self, arguments: dict[str, Any], machine: str) -> str:
        """The error of a call whose machine has no live worker left."""
        name = self.descriptor.name
        return f"{name}: machine {machine}, which holds this call's state, has no live worker"

    def time_limit_s(self, arguments: dict[str, Any], settings: Settings) -> float:
        """How long this call may run; the platform's Celery limits are set above it."""
        return self.descriptor.time_limit_s

    def max_time_limit_s(self, settings: Settings) -> float:
        """The longest any call of this tool may run."""
        return self.descriptor.time_limit_s

    @abstractmethod
    def run(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        """Run with validated arguments (schema defaults filled in).

        Raises:
            ToolExecutionError: the tool failed; ToolTimeout when it ran out of time.
            SandboxViolation: the arguments ask for something outside the sandbox.
        """
