"""The git tools that can lose work or reach out: reset, clean, push. Admin level, and
every call waits for an operator's approval."""

from __future__ import annotations

from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.builtin.git._repo import Repository, branch_name, revision
from toolrun.tools.builtin.git._tool import PATHS, GitTool, describe

ADMIN = PermissionLevel.ADMIN


class GitResetTool(GitTool):
    revision_arguments = ("revision",)
    descriptor = describe(
        "git_reset",
        "Move the current branch to a revision (git reset): `soft` keeps index and files, "
        "`mixed` (default) keeps files, `hard` discards every uncommitted change.",
        properties={
            "revision": {"type": "string", "minLength": 1, "description": "Default: HEAD."},
            "mode": {"enum": ["soft", "mixed", "hard"], "default": "mixed"},
        },
        returns={"commit": {"type": "string"}, "mode": {"type": "string"}},
        examples=[
            ("Unstage everything", {}),
            (
                "Undo the last commit, keeping its changes staged",
                {"revision": "HEAD~1", "mode": "soft"},
            ),
            ("Throw away every local change", {"mode": "hard"}),
            ("Move the branch back one commit", {"revision": "HEAD~1"}),
        ],
        permission=ADMIN,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        target = revision(arguments.get("revision", "HEAD"))
        # git reset takes no --end-of-options; `revision` refused a leading '-' already.
        repo.run(["reset", f"--{arguments['mode']}", target, "--"])
        return {"commit": repo.run(["rev-parse", "HEAD"]).text.strip(), "mode": arguments["mode"]}


class GitCleanTool(GitTool):
    descriptor = describe(
        "git_clean",
        "Delete untracked files (git clean; directories with `directories`, ignored "
        "files too with `ignored`); `dry_run` lists what would go.",
        properties={
            "directories": {"type": "boolean", "default": False},
            "ignored": {"type": "boolean", "default": False},
            "dry_run": {"type": "boolean", "default": False},
            "paths": PATHS,
        },
        returns={
            "removed": {"type": "array", "items": {"type": "string"}},
            "dry_run": {"type": "boolean"},
        },
        examples=[
            ("List what would be deleted", {"dry_run": True}),
            ("Delete untracked files and directories", {"directories": True}),
            (
                "Delete build output under dist, ignored files included",
                {"paths": ["dist"], "ignored": True, "directories": True},
            ),
            (
                "Remove untracked build files from the working directory",
                {"paths": ["build"], "directories": True},
            ),
        ],
        permission=ADMIN,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        argv = ["clean", "--dry-run" if arguments["dry_run"] else "--force"]
        argv += ["-d"] * arguments["directories"] + ["-x"] * arguments["ignored"]
        listed = repo.run([*argv, "--", *repo.paths(arguments.get("paths", []))]).text
        prefixes = ("Would remove ", "Removing ")
        removed = [
            repo.display(line.removeprefix(prefix))
            for line in listed.splitlines()
            for prefix in prefixes
            if line.startswith(prefix)
        ]
        return {"removed": removed, "dry_run": arguments["dry_run"]}


class GitPushTool(GitTool):
    revision_arguments = ("remote", "branch")
    descriptor = describe(
        "git_push",
        "Push a branch to a configured remote (git push); `force` overwrites the remote "
        "branch only if it is where this repository last saw it (--force-with-lease).",
        properties={
            "remote": {"type": "string", "minLength": 1, "default": "origin"},
            "branch": {
                "type": "string",
                "minLength": 1,
                "description": "Default: the current one.",
            },
            "force": {"type": "boolean", "default": False},
            "set_upstream": {"type": "boolean", "default": False},
        },
        returns={
            "remote": {"type": "string"},
            "branch": {"type": "string"},
            "output": {"type": "string"},
        },
        examples=[
            ("Push the current branch", {}),
            ("Publish a new branch", {"branch": "feature/retry", "set_upstream": True}),
            ("Replace a rewritten branch", {"branch": "feature/retry", "force": True}),
            ("Send local commits to the remote", {"remote": "origin"}),
        ],
        permission=ADMIN,
        notes=("Only remotes configured in the repository are accepted, never a URL.",),
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        remote = arguments["remote"]
        if remote not in repo.run(["remote"]).text.split():
            raise ToolExecutionError(f"no remote named {remote!r} (see git remote -v)")
        branch = arguments.get("branch")
        if branch is None:
            branch = repo.run(["symbolic-ref", "--short", "HEAD"]).text.strip()
        branch = branch_name(repo, branch)
        argv = ["push", "--porcelain", "--no-verify"]
        argv += ["--force-with-lease"] * arguments["force"] + ["--set-upstream"] * arguments[
            "set_upstream"
        ]
        pushed = repo.run(
            [*argv, "--end-of-options", remote, f"refs/heads/{branch}:refs/heads/{branch}"]
        )
        return {"remote": remote, "branch": branch, "output": pushed.text.strip()}
