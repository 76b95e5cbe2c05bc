"""Running git safely on a repository inside the workspace.

Nothing the agent passes is read as an option: revisions follow ``--end-of-options``,
paths follow ``--`` (with literal pathspecs), and values such as a message or an author
travel inside ``--flag=value``. Nothing the repository says runs: no system or global
config, no hooks, pager, editor, fsmonitor, external diff or textconv, and a repository
whose own config names a command (a filter, a diff driver, an upload-pack) is refused.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from toolrun.errors import SandboxViolation, ToolExecutionError, ToolTimeout
from toolrun.sandbox.output import BoundedBytes
from toolrun.tools.base import ToolContext

GIT = "git"
TIME_LIMIT_S = 30.0
MAX_OUTPUT_BYTES = 8 * 2**20
DEFAULT_IDENTITY = ("toolrun", "toolrun@localhost")
# Set on every run: they outrank the repository's own config.
_OVERRIDES = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.editor=true",
    "sequence.editor=true",
    "core.askPass=",
    "credential.helper=",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "protocol.allow=never",  # then only these transports: no ext::, no git://
    "protocol.file.allow=always",
    "protocol.https.allow=always",
    "protocol.ssh.allow=always",
    "color.ui=false",
)
# Repository config keys that would run a command of the repository's choosing.
_COMMAND_KEYS = re.compile(
    r"^(filter\..+\.(clean|smudge|process)|diff\..+\.(command|textconv)|merge\..+\.driver"
    r"|remote\..+\.(uploadpack|receivepack)|core\.(sshcommand|gitproxy)"
    r"|gpg(\..+)?\.program|uploadpack\.packobjectshook|include\.path|includeif\..+)$"
)
_REVISION = re.compile(r"^[^\s\x00-\x1f\x7f\\]{1,256}$")
_IDENTITY = re.compile(r"^[^<>\n\x00]+ <[^<>\s\x00]+>$")


@dataclass(frozen=True)
class GitOutput:
    stdout: bytes
    stderr: str
    exit_code: int | None
    truncated: bool

    @property
    def text(self) -> str:
        return self.stdout.decode(errors="replace")


@dataclass(frozen=True)
class Repository:
    """A repository whose work tree and git directory are both inside the workspace."""

    ctx: ToolContext
    root: Path

    @classmethod
    def open(cls, ctx: ToolContext, path: str | None) -> Repository:
        """The repository containing `path` (default: the workspace root).

        Raises:
            SandboxViolation: the path, work tree or git directory is outside the workspace.
            ToolExecutionError: not a repository, or its config would run commands.
        """
        start = ctx.workspace.resolve(path or ".")
        probe = cls(ctx, start if start.is_dir() else start.parent)
        found = probe.run(["rev-parse", "--show-toplevel", "--absolute-git-dir"], check=False)
        lines = found.text.splitlines()
        if found.exit_code != 0 or len(lines) != 2:
            shown = ctx.workspace.display(probe.root)
            raise ToolExecutionError(f"not a git repository: {shown} (run git init first)")
        top, git_dir = (Path(line).resolve() for line in lines)
        for what, where in (("work tree", top), ("git directory", git_dir)):
            if not where.is_relative_to(ctx.workspace.root):
                raise SandboxViolation(f"the repository's {what} is outside the workspace")
        if (git_dir / "objects" / "info" / "alternates").exists():
            raise SandboxViolation("the repository borrows objects from elsewhere (alternates)")
        repository = cls(ctx, top)
        repository._refuse_commands()
        return repository

    def run(
        self,
        arguments: Sequence[str],
        *,
        check: bool = True,
        env: dict[str, str] | None = None,
        max_bytes: int = MAX_OUTPUT_BYTES,
    ) -> GitOutput:
        """Run ``git <arguments>`` in the repository.

        Raises:
            ToolExecutionError: git failed (when `check`), naming git's own message.
            ToolTimeout: it ran past TIME_LIMIT_S.
        """
        overrides = [part for item in _OVERRIDES for part in ("-c", item)]
        argv = [GIT, "--no-pager", "--literal-pathspecs", *overrides, *arguments]
        runner = dataclasses.replace(
            self.ctx.runner,
            cwd=self.root,
            env={
                **self.ctx.runner.env,
                **_ENV,
                # Never look for a repository above the workspace.
                "GIT_CEILING_DIRECTORIES": str(self.ctx.workspace.root.parent),
                **(env or {}),
            },
        )
        stdout, stderr = BoundedBytes(max_bytes), BoundedBytes(64 * 1024)
        ended = runner.run(argv, timeout_s=TIME_LIMIT_S, stdout=stdout, stderr=stderr)
        output = GitOutput(
            stdout.data(), stderr.data().decode(errors="replace"), ended.exit_code, stdout.truncated
        )
        if ended.timed_out:
            raise ToolTimeout(f"git {arguments[0]} timed out after {TIME_LIMIT_S:g} s")
        if check and output.exit_code != 0:
            why = _message(output.stderr) or _message(output.text) or "no message"
            raise ToolExecutionError(f"git {arguments[0]} failed: {why}")
        return output

    def paths(self, paths: Sequence[str]) -> list[str]:
        """Workspace paths as git pathspecs (relative to the work tree), confined."""
        found = []
        for path in paths:
            resolved = self.ctx.workspace.resolve(path)
            if not resolved.is_relative_to(self.root):
                raise ToolExecutionError(f"{path} is not inside the repository")
            found.append(str(resolved.relative_to(self.root)) or ".")
        return found

    def display(self, git_path: str) -> str:
        """A path git printed (relative to the work tree) as a workspace path."""
        prefix = self.ctx.workspace.display(self.root)
        return git_path if prefix == "." else f"{prefix}/{git_path}"

    def identity(self) -> dict[str, str]:
        """Committer variables when the repository names no user (global config is off)."""
        name = self.run(["config", "--get", "user.name"], check=False).text.strip()
        email = self.run(["config", "--get", "user.email"], check=False).text.strip()
        if name and email:
            return {}
        default_name, default_email = DEFAULT_IDENTITY
        return {
            "GIT_AUTHOR_NAME": name or default_name,
            "GIT_AUTHOR_EMAIL": email or default_email,
            "GIT_COMMITTER_NAME": name or default_name,
            "GIT_COMMITTER_EMAIL": email or default_email,
        }

    def _refuse_commands(self) -> None:
        listed = self.run(["config", "--list", "--name-only", "-z"], check=False)
        keys = [key for key in listed.text.split("\0") if key]
        commands = sorted({key for key in keys if _COMMAND_KEYS.match(key.lower())})
        if commands:
            raise ToolExecutionError(
                "the repository's config runs commands of its own ("
                + ", ".join(commands)
                + "); the git tools refuse it — remove those keys, or use bash (with approval)"
            )


def revision(value: str, what: str = "revision") -> str:
    """A revision or ref as the agent gave it, refused if git could read it as an option.

    Raises:
        SandboxViolation: it starts with '-' or holds whitespace or control characters.
    """
    if value.startswith("-"):
        raise SandboxViolation(f"{what} {value!r} starts with '-': it would be read as an option")
    if not _REVISION.match(value):
        raise ToolExecutionError(f"{what} {value!r} is not a valid git {what}")
    return value


def branch_name(repository: Repository, value: str) -> str:
    """A new branch's name, checked by git's own rules (check-ref-format)."""
    revision(value, "branch name")
    checked = repository.run(["check-ref-format", "--branch", value], check=False)
    if checked.exit_code != 0:
        raise ToolExecutionError(f"{value!r} is not a valid branch name")
    return value


def identity(value: str) -> str:
    """An author as ``Name <email>``."""
    if not _IDENTITY.match(value):
        raise ToolExecutionError(f"author {value!r} must look like 'Name <email>'")
    return value


def _message(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    meaningful = [line for line in lines if not line.startswith("hint:")]
    return "; ".join(meaningful[-3:])


_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_ASKPASS": "",
    "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
}
