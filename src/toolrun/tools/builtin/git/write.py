"""The git tools that change the repository but lose nothing: add, commit, branch,
switch, stash."""

from __future__ import annotations

from typing import Any

from toolrun.errors import ToolExecutionError
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.builtin.git import _parse
from toolrun.tools.builtin.git._repo import Repository, branch_name, identity, revision
from toolrun.tools.builtin.git._tool import PATHS, GitTool, describe

WRITE = PermissionLevel.READ_WRITE


class GitAddTool(GitTool):
    descriptor = describe(
        "git_add",
        "Stage paths for the next commit (git add; or every change with `all`); returns "
        "the status afterwards.",
        properties={
            "paths": {**PATHS, "minItems": 1},
            "all": {"type": "boolean", "default": False},
        },
        returns={"entries": {"type": "array", "items": {"type": "object"}}},
        examples=[
            ("Stage one file", {"paths": ["src/app.py"]}),
            ("Stage a directory", {"paths": ["docs"]}),
            ("Stage every change, deletions included", {"all": True}),
            ("Add a new file to the staging area", {"paths": ["docs/guide.md"]}),
            ("Stage all modified files before committing", {"all": True}),
        ],
        permission=WRITE,
        notes=("Give `paths` or `all`, not both.",),
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        paths = arguments.get("paths")
        if bool(paths) == arguments["all"]:
            raise ToolExecutionError("give either paths or all: true")
        repo.run(["add", "--all"] if arguments["all"] else ["add", "--", *repo.paths(paths or [])])
        status = repo.run(["status", "--porcelain=v2", "-z", "--untracked-files=all"])
        return {"entries": _parse.status(repo, status.text)["entries"]}


class GitCommitTool(GitTool):
    descriptor = describe(
        "git_commit",
        "Commit what is staged (git commit; or every tracked change with `all`) with a "
        "message and optionally an author; returns the new commit's entry and files.",
        properties={
            "message": {"type": "string", "minLength": 1},
            "author": {"type": "string", "description": "Name <email> (default: the repo's user)."},
            "all": {
                "type": "boolean",
                "default": False,
                "description": "Stage tracked changes first.",
            },
            "allow_empty": {"type": "boolean", "default": False},
        },
        returns={
            "commit": {"type": "object"},
            "files": {"type": "array", "items": {"type": "object"}},
        },
        required=("message",),
        examples=[
            ("Commit the staged changes", {"message": "Fix the retry delay"}),
            ("Commit every tracked change", {"message": "Update docs", "all": True}),
            ("Commit as someone", {"message": "Add tests", "author": "Alice <alice@example.com>"}),
            ("Commit the work so far with a message", {"message": "Add the search page"}),
        ],
        permission=WRITE,
        notes=(
            "Without user.name/user.email in the repository, toolrun <toolrun@localhost> commits.",
        ),
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        argv = ["commit", "--no-verify", f"--message={arguments['message']}"]
        if "author" in arguments:
            argv.append(f"--author={identity(arguments['author'])}")
        argv += ["--all"] * arguments["all"] + ["--allow-empty"] * arguments["allow_empty"]
        repo.run(argv, env=repo.identity())
        entry = repo.run(["log", "-z", "-n1", f"--format={_parse.LOG_FORMAT}", "HEAD", "--"])
        files = repo.run(["show", "--numstat", "-z", "--format=", "--no-ext-diff", "HEAD", "--"])
        return {
            "commit": _parse.commits(entry.text)[0],
            "files": _parse.numstat(repo, files.text.lstrip("\0")),
        }


class GitBranchCreateTool(GitTool):
    revision_arguments = ("name", "start")
    descriptor = describe(
        "git_branch_create",
        "Create a branch (git branch NAME) at a revision (default HEAD), optionally "
        "switching to it.",
        properties={
            "name": {"type": "string", "minLength": 1},
            "start": {"type": "string", "minLength": 1, "description": "Default: HEAD."},
            "switch": {"type": "boolean", "default": False},
        },
        returns={
            "name": {"type": "string"},
            "commit": {"type": "string"},
            "switched": {"type": "boolean"},
        },
        required=("name",),
        examples=[
            ("Create a feature branch here", {"name": "feature/retry"}),
            (
                "Create a branch from a tag and switch to it",
                {"name": "hotfix", "start": "v1.0", "switch": True},
            ),
            ("Create a branch two commits back", {"name": "before-refactor", "start": "HEAD~2"}),
            ("Start a new branch for a feature", {"name": "feature/search"}),
            ("Make a branch from another branch", {"name": "fix/login", "start": "develop"}),
        ],
        permission=WRITE,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        name = branch_name(repo, arguments["name"])
        start = revision(arguments.get("start", "HEAD"))
        repo.run(["branch", "--no-track", "--end-of-options", name, start])
        if arguments["switch"]:
            repo.run(["switch", "--end-of-options", name])
        commit = repo.run(["rev-parse", "--verify", "--end-of-options", f"refs/heads/{name}"])
        return {"name": name, "commit": commit.text.strip(), "switched": arguments["switch"]}


class GitSwitchTool(GitTool):
    revision_arguments = ("branch",)
    descriptor = describe(
        "git_switch",
        "Switch the working tree to a branch (git switch, or check out; create it with "
        "`create`); refuses when local changes would be overwritten.",
        properties={
            "branch": {"type": "string", "minLength": 1},
            "create": {"type": "boolean", "default": False},
            "detach": {
                "type": "boolean",
                "default": False,
                "description": "Check out a revision, no branch.",
            },
        },
        returns={"head": {"type": ["string", "null"]}, "commit": {"type": "string"}},
        required=("branch",),
        examples=[
            ("Switch back to main", {"branch": "main"}),
            ("Switch to a new branch made here", {"branch": "experiment", "create": True}),
            ("Check out a tag to look at it", {"branch": "v1.0", "detach": True}),
            ("Go to another branch", {"branch": "develop"}),
            ("Check out an existing branch", {"branch": "feature/login"}),
        ],
        permission=WRITE,
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        target = arguments["branch"]
        if arguments["create"]:
            argv = ["switch", f"--create={branch_name(repo, target)}"]
        else:
            argv = [
                "switch",
                *(["--detach"] if arguments["detach"] else []),
                "--end-of-options",
                revision(target),
            ]
        repo.run(argv)
        head = repo.run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False).text.strip()
        commit = repo.run(["rev-parse", "HEAD"]).text.strip()
        return {"head": head or None, "commit": commit}


class GitStashTool(GitTool):
    descriptor = describe(
        "git_stash",
        "Put local changes aside and bring them back (git stash): push (with a message, "
        "untracked files too if asked), list, apply, pop or drop an entry.",
        properties={
            "action": {"enum": ["push", "list", "apply", "pop", "drop"], "default": "push"},
            "message": {"type": "string", "minLength": 1},
            "include_untracked": {"type": "boolean", "default": False},
            "index": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "stash@{index}",
            },
        },
        returns={
            "stashes": {"type": "array", "items": {"type": "object"}},
            "output": {"type": "string"},
        },
        examples=[
            ("Set changes aside", {"action": "push", "message": "wip: parser"}),
            ("List what is stashed", {"action": "list"}),
            ("Bring the newest stash back", {"action": "pop"}),
            ("Save uncommitted work for later and clean the working tree", {"action": "push"}),
            ("Apply a stash again", {"action": "apply", "index": 0}),
        ],
        permission=WRITE,
        notes=("Every action returns the stash list afterwards.",),
    )

    def git(self, repo: Repository, arguments: dict[str, Any]) -> dict[str, Any]:
        action = arguments["action"]
        output = ""
        if action == "push":
            argv = ["stash", "push"] + ["--include-untracked"] * arguments["include_untracked"]
            if "message" in arguments:
                argv.append(f"--message={arguments['message']}")
            output = repo.run(argv, env=repo.identity()).text
        elif action != "list":
            output = repo.run(["stash", action, f"stash@{{{arguments['index']}}}"]).text
        listed = repo.run(["stash", "list", "--format=%gd%x1f%H%x1f%gs"]).text
        stashes = [
            dict(zip(("ref", "commit", "message"), line.split("\x1f"), strict=True))
            for line in listed.splitlines()
        ]
        return {"stashes": stashes, "output": output.strip()}
