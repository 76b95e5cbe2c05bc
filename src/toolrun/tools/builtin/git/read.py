"""The read-only git tools: status, diff, log, show, blame, branches."""

from __future__ import annotations

from typing import Any

from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.builtin.git import _parse
from toolrun.tools.builtin.git._repo import Repository, revision
from toolrun.tools.builtin.git._tool import PATHS, GitTool, describe

READ = PermissionLevel.READ_ONLY
_NO_DRIVERS = ["--no-ext-diff", "--no-textconv", "--no-color"]
_REVISION = {"type": "string", "minLength": 1, "description": "A commit, branch, tag, HEAD~2..."}
_COMMITS = {"type": "array", "items": {"type": "object"}}


class GitStatusTool(GitTool):
    descriptor = describe(
        "git_status",
        "Show the working tree's status (git status): the branch (head, upstream, "
        "ahead/behind) and, per changed path, its index and worktree state (modified, "
        "added, deleted, renamed, untracked, unmerged...) with conflicts marked.",
        properties={
            "untracked": {"type": "boolean", "default": True, "description": "List them."},
            "ignored": {"type": "boolean", "default": False, "description": "List them."},
        },
        returns={
            "branch": {"type": "object"},
            "entries": {"type": "array", "items": {"type": "object"}},
            "clean": {"type": "boolean", "description": "Nothing changed, nothing untracked."},
        },
        examples=[
            ("Show what changed in the workspace", {}),
            ("Show the status of tracked files only", {"untracked": False}),
            ("Show the status of a repository in a subdirectory", {"repo": "vendor/lib"}),
            ("See whether there are uncommitted changes", {}),
            ("List untracked and modified files", {"untracked": True}),
            ("Check whether the working tree is clean", {}),
        ],
        permission=READ,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        flags = ["--untracked-files=" + ("all" if arguments["untracked"] else "no")]
        if arguments["ignored"]:
            flags.append("--ignored")
        found = repo.run(["status", "--porcelain=v2", "--branch", "-z", *flags])
        status = _parse.status(repo, found.text)
        return {**status, "clean": not status["entries"]}


class GitDiffTool(GitTool):
    revision_arguments = ("from", "to")
    descriptor = describe(
        "git_diff",
        "Show changes as a unified diff (git diff) with a per-file summary: the working "
        "tree against the index (the default), the index against HEAD (`staged`), or "
        "between revisions (`from`, `to`), for some paths or all.",
        properties={
            "staged": {"type": "boolean", "default": False},
            "from": _REVISION,
            "to": _REVISION,
            "paths": PATHS,
            "context": {"type": "integer", "minimum": 0, "maximum": 100, "default": 3},
        },
        returns={
            "patch": {"type": "string"},
            "files": {"type": "array", "items": {"type": "object"}},
            "truncated": {"type": "boolean", "description": "The patch was cut at 8 MiB."},
        },
        examples=[
            ("Show the unstaged changes", {}),
            ("Show what is staged for the next commit", {"staged": True}),
            (
                "Changes to one file between two revisions",
                {"from": "v1.0", "to": "HEAD", "paths": ["src/app.py"]},
            ),
            ("See what I changed but have not staged", {}),
            ("See the changes since the last commit", {"from": "HEAD"}),
        ],
        permission=READ,
        notes=("`to` needs `from`; with `staged`, `from` is the base instead of HEAD.",),
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        revisions = [revision(arguments[key]) for key in ("from", "to") if key in arguments]
        if "to" in arguments and "from" not in arguments:
            revisions.insert(0, "HEAD")
        base = ["diff", *_NO_DRIVERS, *(["--cached"] if arguments["staged"] else [])]
        tail = ["--end-of-options", *revisions, "--", *repo.paths(arguments.get("paths", []))]
        patch = repo.run([*base, f"-U{arguments['context']}", *tail])
        files = repo.run([*base, "--numstat", "-z", *tail])
        return {
            "patch": patch.text,
            "files": _parse.numstat(repo, files.text),
            "truncated": patch.truncated,
        }


class GitLogTool(GitTool):
    revision_arguments = ("revision",)
    descriptor = describe(
        "git_log",
        "List the commit history (git log): the last commits, newest first, as structured "
        "entries (commit, parents, author, dates, subject, body); filter by path, author, "
        "date range and starting revision.",
        properties={
            "max_count": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "default": 20,
                "description": "How many commits at most.",
            },
            "revision": _REVISION,
            "paths": PATHS,
            "author": {"type": "string", "minLength": 1, "description": "Regex on name/email."},
            "since": {
                "type": "string",
                "minLength": 1,
                "description": "e.g. 2024-01-31, 2 weeks ago",
            },
            "until": {"type": "string", "minLength": 1},
        },
        returns={"commits": _COMMITS},
        examples=[
            ("List the last five commits", {"max_count": 5}),
            ("Find who changed a file lately", {"paths": ["src/app.py"], "max_count": 10}),
            ("List one author's commits this month", {"author": "alice", "since": "1 month ago"}),
            ("See the history of commits on this branch", {}),
            ("See the recent commits with their authors and dates", {"max_count": 10}),
        ],
        permission=READ,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        argv = ["log", "-z", f"--format={_parse.LOG_FORMAT}", f"-n{arguments['max_count']}"]
        for key in ("author", "since", "until"):
            if key in arguments:
                argv.append(f"--{key}={arguments[key]}")
        argv += ["--end-of-options", revision(arguments.get("revision", "HEAD"))]
        argv += ["--", *repo.paths(arguments.get("paths", []))]
        return {"commits": _parse.commits(repo.run(argv).text)}


class GitShowTool(GitTool):
    revision_arguments = ("revision",)
    descriptor = describe(
        "git_show",
        "Show one commit (git show): its entry (as git_log gives it) and what it changed, "
        "its patch; or, with `path`, that file's content at the revision.",
        properties={
            "revision": _REVISION,
            "path": {"type": "string", "minLength": 1, "description": "A file to show at it."},
            "context": {"type": "integer", "minimum": 0, "maximum": 100, "default": 3},
        },
        returns={
            "commit": {"type": "object"},
            "patch": {"type": "string"},
            "content": {"type": "string", "description": "With `path`: the file's text."},
            "truncated": {"type": "boolean"},
        },
        examples=[
            ("Show the last commit", {}),
            ("Show a commit by its hash", {"revision": "3f2a9c1"}),
            ("Show a file as it was two commits ago", {"revision": "HEAD~2", "path": "README.md"}),
            ("See what a commit changed", {"revision": "HEAD~1"}),
        ],
        permission=READ,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        rev = revision(arguments.get("revision", "HEAD"))
        if "path" in arguments:
            (path,) = repo.paths([arguments["path"]])
            blob = repo.run(["show", "--no-textconv", "--end-of-options", f"{rev}:{path}"])
            return {"content": blob.text, "truncated": blob.truncated}
        entry = repo.run(
            ["log", "-z", "-n1", f"--format={_parse.LOG_FORMAT}", "--end-of-options", rev, "--"]
        )
        patch = repo.run(
            [
                "show",
                *_NO_DRIVERS,
                "--format=",
                f"-U{arguments['context']}",
                "--end-of-options",
                rev,
                "--",
            ]
        )
        found = _parse.commits(entry.text)
        return {
            "commit": found[0] if found else None,
            "patch": patch.text,
            "truncated": patch.truncated,
        }


class GitBlameTool(GitTool):
    revision_arguments = ("revision",)
    descriptor = describe(
        "git_blame",
        "Show who last changed each line of a file (git blame): per line, the commit, "
        "author, date, the commit's summary and the text; optionally a line range, at a "
        "revision.",
        properties={
            "path": {"type": "string", "minLength": 1},
            "revision": _REVISION,
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        returns={"lines": {"type": "array", "items": {"type": "object"}}},
        required=("path",),
        examples=[
            ("Blame a whole file", {"path": "src/app.py"}),
            ("Blame lines 10 to 20", {"path": "src/app.py", "start_line": 10, "end_line": 20}),
            ("Blame as of a tag", {"path": "README.md", "revision": "v1.0"}),
            (
                "Find who wrote a line of code",
                {"path": "src/app.py", "start_line": 42, "end_line": 42},
            ),
        ],
        permission=READ,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        (path,) = repo.paths([arguments["path"]])
        argv = ["blame", "--porcelain", "--no-textconv"]
        if "start_line" in arguments or "end_line" in arguments:
            argv.append(f"-L{arguments.get('start_line', 1)},{arguments.get('end_line', '')}")
        if "revision" in arguments:
            argv += ["--end-of-options", revision(arguments["revision"])]
        return {"lines": _parse.blame(repo.run([*argv, "--", path]).text)}


class GitBranchesTool(GitTool):
    descriptor = describe(
        "git_branches",
        "List the branches (git branch), with the commit each points at, which one is "
        "checked out, its upstream and its last commit's date and subject.",
        properties={
            "remotes": {
                "type": "boolean",
                "default": False,
                "description": "Add remote-tracking ones.",
            }
        },
        returns={
            "branches": {"type": "array", "items": {"type": "object"}},
            "current": {"type": ["string", "null"]},
        },
        examples=[
            ("List the local branches", {}),
            ("List local and remote-tracking branches", {"remotes": True}),
            ("List the branches of a nested repository", {"repo": "vendor/lib"}),
            ("Show every branch and where it points", {}),
            ("See the remote branches too", {"remotes": True}),
        ],
        permission=READ,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        fields = [
            "refname:short",
            "objectname",
            "HEAD",
            "upstream:short",
            "committerdate:iso-strict",
            "contents:subject",
        ]
        argv = ["for-each-ref", "--format=" + "%00".join(f"%({field})" for field in fields)]
        argv += ["refs/heads"] + (["refs/remotes"] if arguments["remotes"] else [])
        branches = []
        for line in repo.run(argv).text.splitlines():
            name, commit, head, upstream, date, subject = line.split("\0")
            branches.append(
                {
                    "name": name,
                    "commit": commit,
                    "current": head == "*",
                    "upstream": upstream or None,
                    "date": date,
                    "subject": subject,
                }
            )
        current = next((branch["name"] for branch in branches if branch["current"]), None)
        return {"branches": branches, "current": current}
