"""Git's machine-readable output as structured records."""

from __future__ import annotations

import re
from typing import Any

from toolrun.tools.builtin.git._repo import Repository

FIELD = "\x1f"
LOG_FORMAT = FIELD.join(["%H", "%P", "%an", "%ae", "%aI", "%cn", "%ce", "%cI", "%s", "%b"])
_BLAME_HEADER = re.compile(r"^(?P<commit>[0-9a-f]{40,64}) \d+ (?P<line>\d+)( \d+)?$")
_STATES = {
    ".": "unmodified",
    "M": "modified",
    "T": "type_changed",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "U": "unmerged",
}


def status(repo: Repository, raw: str) -> dict[str, Any]:
    """``git status --porcelain=v2 --branch -z``: the branch and one entry per path."""
    branch: dict[str, Any] = {"head": None, "commit": None, "upstream": None}
    branch.update(ahead=0, behind=0)
    entries: list[dict[str, Any]] = []
    records = iter(raw.split("\0"))
    for record in records:
        if record.startswith("# "):
            _branch_line(branch, record[2:])
        elif record.startswith(("1 ", "2 ", "u ")):
            kind, xy = record[0], record[2:4]
            fields = record.split(" ", {"1": 8, "2": 9, "u": 10}[kind])
            entry = {
                "path": repo.display(fields[-1]),
                "index": _STATES.get(xy[0], xy[0]),
                "worktree": _STATES.get(xy[1], xy[1]),
                "conflicted": kind == "u",
            }
            if kind == "2":
                entry["orig_path"] = repo.display(next(records))
            if kind == "u":
                entry["index"] = entry["worktree"] = "unmerged"
                entry["conflict"] = _conflict(xy)
            entries.append(entry)
        elif record.startswith(("? ", "! ")):
            state = "untracked" if record[0] == "?" else "ignored"
            entries.append(
                {"path": repo.display(record[2:]), "index": state, "worktree": state}
                | {"conflicted": False}
            )
    return {"branch": branch, "entries": entries}


def _branch_line(branch: dict[str, Any], line: str) -> None:
    key, _, value = line.partition(" ")
    if key == "branch.oid":
        branch["commit"] = None if value == "(initial)" else value
    elif key == "branch.head":
        branch["head"] = None if value == "(detached)" else value
        branch["detached"] = value == "(detached)"
    elif key == "branch.upstream":
        branch["upstream"] = value
    elif key == "branch.ab":
        ahead, behind = value.split()
        branch["ahead"], branch["behind"] = int(ahead), -int(behind)


def _conflict(xy: str) -> str:
    """The kind of merge conflict, in git's words (git help status)."""
    return {
        "DD": "both deleted",
        "AU": "added by us",
        "UD": "deleted by them",
        "UA": "added by them",
        "DU": "deleted by us",
        "AA": "both added",
        "UU": "both modified",
    }.get(xy, xy)


def commits(raw: str) -> list[dict[str, Any]]:
    """``git log -z --format=LOG_FORMAT``: one record per commit."""
    found = []
    for record in raw.split("\0"):
        if not record.strip():
            continue
        parts = record.lstrip("\n").split(FIELD)
        if len(parts) != 10:
            continue
        sha, parents, an, ae, ad, cn, ce, cd, subject, body = parts
        found.append(
            {
                "commit": sha,
                "parents": parents.split(),
                "author_name": an,
                "author_email": ae,
                "date": ad,
                "committer_name": cn,
                "committer_email": ce,
                "committer_date": cd,
                "subject": subject,
                "body": body.strip(),
            }
        )
    return found


def numstat(repo: Repository, raw: str) -> list[dict[str, Any]]:
    """``git diff --numstat -z``: per file, lines added and deleted (None: binary)."""
    files = []
    records = iter(raw.split("\0"))
    for record in records:
        if not record:
            continue
        added, deleted, path = record.split("\t", 2)
        entry: dict[str, Any] = {
            "added": None if added == "-" else int(added),
            "deleted": None if deleted == "-" else int(deleted),
        }
        if path == "":  # a rename: the old and the new path follow
            entry["orig_path"] = repo.display(next(records))
            path = next(records)
        entry["path"] = repo.display(path)
        files.append(entry)
    return files


def blame(raw: str) -> list[dict[str, Any]]:
    """``git blame --porcelain``: one record per line."""
    lines: list[dict[str, Any]] = []
    about: dict[str, dict[str, str]] = {}  # per commit, its fields (given once)
    commit, number = "", 0
    for line in raw.split("\n"):
        if line.startswith("\t"):
            info = about.get(commit, {})
            lines.append(
                {
                    "line": number,
                    "commit": commit,
                    "author": info.get("author", ""),
                    "author_email": info.get("author-mail", "").strip("<>"),
                    "date": int(info.get("author-time", "0")),
                    "summary": info.get("summary", ""),
                    "text": line[1:],
                }
            )
        elif header := _BLAME_HEADER.match(line):
            commit, number = header["commit"], int(header["line"])
        elif line:
            key, _, value = line.partition(" ")
            about.setdefault(commit, {}).setdefault(key, value)
    return lines
