"""The sandbox: path confinement, confined file I/O, the subprocess runner and its jail.

Names are imported on first use, so that `toolrun.sandbox.jail` (standard library only)
can be imported without the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun._lazy import exports

if TYPE_CHECKING:
    from toolrun.sandbox.limits import ResourceLimits
    from toolrun.sandbox.paths import Workspace
    from toolrun.sandbox.runner import ProcessResult, ProcessRunner, sandbox_env

_HOMES = {
    "ResourceLimits": "toolrun.sandbox.limits",
    "Workspace": "toolrun.sandbox.paths",
    "ProcessResult": "toolrun.sandbox.runner",
    "ProcessRunner": "toolrun.sandbox.runner",
    "sandbox_env": "toolrun.sandbox.runner",
}

__all__ = ["ProcessResult", "ProcessRunner", "ResourceLimits", "Workspace", "sandbox_env"]


__getattr__ = exports(__name__, _HOMES)
