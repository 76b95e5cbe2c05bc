"""Runs one call in-process: resolve, validate, confirm, run, and shape the result; or,
on a worker, runs a call the lifecycle already admitted (`run_admitted`)."""

from __future__ import annotations

import logging
import time
import traceback
from typing import Any

from toolrun.errors import (
    InvalidArguments,
    NetworkRefused,
    SandboxViolation,
    ToolExecutionError,
    ToolTimeout,
)
from toolrun.permissions.approvals import ApprovalRequest
from toolrun.tools.base import Tool, ToolContext, ToolOutput
from toolrun.tools.model import ToolCall, ToolResult, ToolStatus
from toolrun.tools.registry import ToolRegistry
from toolrun.tools.validation import validate_arguments, with_defaults

log = logging.getLogger(__name__)
MAX_TRACEBACK_CHARS = 8000


class Executor:
    """Executes calls against a registry; never raises for anything a caller sent."""

    def __init__(
        self, registry: ToolRegistry, *, propagate: tuple[type[BaseException], ...] = ()
    ) -> None:
        """`propagate`: exceptions that must reach the caller (e.g. a worker's soft limit)."""
        self.registry = registry
        self.propagate = propagate

    def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Run `call` and return its ToolResult (status error/denied/timeout, never a raise)."""
        tool = self.registry.get(call.tool_name, call.version)
        return self._timed(tool, call, ctx, arguments=None, rate=True)

    def run_admitted(
        self,
        tool: Tool,
        call: ToolCall,
        arguments: dict[str, Any],
        ctx: ToolContext,
        *,
        rate: bool,
    ) -> ToolResult:
        """Run a call the lifecycle admitted, with its `tool` found: `arguments` are valid,
        with their defaults. `rate`: rate the call again, asking `ctx.approver` if it now
        needs approval (a call let through as safe, whose workspace may have changed)."""
        return self._timed(tool, call, ctx, arguments=arguments, rate=rate)

    def _timed(
        self,
        tool: Tool | None,
        call: ToolCall,
        ctx: ToolContext,
        *,
        arguments: dict[str, Any] | None,
        rate: bool,
    ) -> ToolResult:
        started = time.perf_counter()
        if tool is None:
            result = self._unknown_tool(call)
        else:
            result = self._execute_tool(tool, call, ctx, arguments=arguments, rate=rate)
        result.metadata["execution_time_ms"] = round((time.perf_counter() - started) * 1000, 3)
        return result

    def _unknown_tool(self, call: ToolCall) -> ToolResult:
        return ToolResult(
            call_id=call.id,
            tool_name=call.tool_name,
            status=ToolStatus.ERROR,
            error=self.registry.missing(call.tool_name, call.version),
        )

    def _execute_tool(
        self,
        tool: Tool,
        call: ToolCall,
        ctx: ToolContext,
        *,
        arguments: dict[str, Any] | None,
        rate: bool,
    ) -> ToolResult:
        """`arguments`: already checked, defaults applied (None: check `call`'s)."""
        descriptor = tool.descriptor

        def result(
            status: ToolStatus,
            output: Any = None,
            error: str | None = None,
            cause: BaseException | None = None,
        ) -> ToolResult:
            ended = ToolResult(
                call_id=call.id,
                tool_name=descriptor.name,
                tool_version=descriptor.version,
                status=status,
                output=output,
                error=error,
            )
            if cause is not None:  # for the history: what kind of failure this was
                ended.metadata["error_type"] = type(cause).__name__
            return ended

        try:
            if arguments is None:
                validate_arguments(tool.validator, call.arguments)
                arguments = with_defaults(descriptor.parameters, call.arguments)
            verdict = tool.verdict(arguments, ctx) if rate else None
            if verdict is not None and verdict.needs_approval:
                request = ApprovalRequest(
                    call_id=call.id,
                    tool_name=descriptor.name,
                    tool_version=descriptor.version,
                    arguments=arguments,
                    warning=verdict.warning,
                    risk=verdict.risk.value,
                    policy=verdict.policy,
                )
                decision = ctx.approver.decide(request)
                if not decision.approved:
                    return result(ToolStatus.DENIED, error=f"{verdict.warning}: {decision.reason}")
            produced = tool.run(arguments, ctx.for_level(descriptor.permission))
            if not isinstance(produced, ToolOutput):
                raise TypeError(f"run() returned {type(produced).__name__}, not ToolOutput")
        except InvalidArguments as exc:
            return result(ToolStatus.ERROR, error=f"invalid arguments: {exc}", cause=exc)
        except SandboxViolation as exc:
            blocked = result(ToolStatus.BLOCKED, error=str(exc), cause=exc)
            if exc.target is not None:
                blocked.metadata["blocked_target"] = exc.target
            if isinstance(exc, NetworkRefused):
                blocked.metadata["blocked_network"] = True
            return blocked
        except ToolTimeout as exc:
            return result(ToolStatus.TIMEOUT, output=exc.output, error=str(exc), cause=exc)
        except ToolExecutionError as exc:
            return result(ToolStatus.ERROR, output=exc.output, error=str(exc), cause=exc)
        except Exception as exc:  # a bug in a tool must still give the caller a result
            if isinstance(exc, self.propagate):
                raise
            log.error(
                "tool %s crashed on call %s: %r",
                descriptor.tool_id,
                call.id,
                exc,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            crashed = result(
                ToolStatus.ERROR, error=f"internal error in {descriptor.name}: {exc!r}", cause=exc
            )
            crashed.metadata["traceback"] = traceback.format_exc(limit=20)[-MAX_TRACEBACK_CHARS:]
            return crashed
        final = result(ToolStatus.SUCCESS, output=produced.output)
        final.metadata.update(produced.metadata)
        return final
