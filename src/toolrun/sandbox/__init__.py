"""The sandbox: path confinement, confined file I/O and the subprocess runner."""

from toolrun.sandbox.limits import ResourceLimits
from toolrun.sandbox.paths import Workspace
from toolrun.sandbox.runner import ProcessResult, ProcessRunner, sandbox_env

__all__ = ["ProcessResult", "ProcessRunner", "ResourceLimits", "Workspace", "sandbox_env"]
