"""The search tool on a fixture project and on part of the Python standard library."""

from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import CallTool

from toolrun.config import Settings
from toolrun.tools import ToolStatus

RETRY = '''"""Retrying failed calls."""


class RetryPolicy:
    """How often to try again, with exponential backoff between attempts."""

    def __init__(self, max_attempts: int = 3, backoff: float = 2.0) -> None:
        self.backoff = backoff

    def delay(self, attempt: int) -> float:
        return self.backoff**attempt
'''
FILES = {
    "src/retry.py": RETRY,
    "src/store.py": 'def save_record(record):\n    """Store a record; retried on failure."""\n',
    "src/policy.go": "package src\n\n// Policy says who may call.\ntype Policy struct{}\n",
    "web/page.ts": "export class PageCache { get(key: string) { return key } }\n",
    "lib/geometry.rs": "pub struct Point { x: f64 }\nimpl Point { pub fn norm(&self) {} }\n",
    "docs/guide.md": "# Deploying\n\nRun it on Kubernetes.\n\n## Backups\n\nSnapshots nightly.\n",
    "secret.py": "def ignored_retry_policy_backoff():\n    pass\n",
    ".gitignore": "secret.py\n",
}


@pytest.fixture
def settings(workspace: Path, tmp_path: Path) -> Settings:
    return Settings(workspace=workspace, home=tmp_path / "home", command_allowlist=None)


@pytest.fixture
def project(workspace: Path) -> Path:
    for name, text in FILES.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    return workspace


def search(call_tool: CallTool, **arguments: Any) -> dict[str, Any]:
    result = call_tool("search", **arguments)
    assert result.status is ToolStatus.SUCCESS, result.error
    output: dict[str, Any] = result.output
    return output


def top(found: dict[str, Any]) -> tuple[str, int, str, str | None]:
    first = found["results"][0]
    return first["path"], first["line"], first["kind"], first["symbol"]


def test_a_natural_language_query_ranks_the_defining_file_first(
    call_tool: CallTool, project: Path
) -> None:
    found = search(call_tool, query="retry policy backoff")

    assert top(found) == ("src/retry.py", 4, "class", "RetryPolicy")
    assert found["results"][0]["snippet"].startswith("class RetryPolicy:")
    assert "secret.py" not in {r["path"] for r in found["results"]}
    assert found["indexed_files"] == 6  # .gitignore'd and hidden files are not indexed


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("PageCache", ("web/page.ts", 1, "class", "PageCache")),
        ("point norm", ("lib/geometry.rs", 2, "method", "norm")),
        ("Policy", ("src/policy.go", 4, "type", "Policy")),
        ("kubernetes deploying", ("docs/guide.md", 1, "section", "Deploying")),
    ],
)
def test_each_language_and_docs_are_searchable(
    call_tool: CallTool, project: Path, query: str, expected: tuple[str, int, str, str]
) -> None:
    assert top(search(call_tool, query=query)) == expected


def test_kind_and_path_filters(call_tool: CallTool, project: Path) -> None:
    symbols = search(call_tool, query="retry", kind="symbol")["results"]
    texts = search(call_tool, query="retry", kind="text")["results"]
    under_web = search(call_tool, query="cache key", path="web")["results"]

    assert {r["kind"] for r in symbols} <= {"class", "method", "function"}
    assert {r["kind"] for r in texts} <= {"chunk", "section"}
    assert {r["path"] for r in under_web} == {"web/page.ts"}


def test_the_index_follows_edits_additions_and_deletions(
    call_tool: CallTool, project: Path
) -> None:
    assert search(call_tool, query="quokka")["results"] == []
    assert search(call_tool, query="quokka")["updated_files"] == 0

    store = project / "src" / "store.py"
    store.write_text("def quokka_counter():\n    return 1\n")
    os.utime(store, ns=(store.stat().st_atime_ns, store.stat().st_mtime_ns + 10**9))
    edited = search(call_tool, query="quokka")
    assert edited["updated_files"] == 1
    assert top(edited) == ("src/store.py", 1, "function", "quokka_counter")

    (project / "src" / "retry.py").unlink()
    after = search(call_tool, query="retry policy backoff")
    assert "src/retry.py" not in {r["path"] for r in after["results"]}
    assert after["indexed_files"] == 5


def test_odd_query_syntax_is_just_words(call_tool: CallTool, project: Path) -> None:
    for query in ['RetryPolicy(" AND', "path:/etc/passwd", "*", "title:[a TO z]", "-x ~2 ^3"]:
        result = call_tool("search", query=query)
        assert result.status is ToolStatus.SUCCESS, (query, result.error)


def test_nothing_outside_the_workspace_is_searched_or_indexed(
    call_tool: CallTool, project: Path
) -> None:
    (project.parent / "outside" / "leak.py").write_text("def outside_secret_zebra(): pass\n")
    (project / "link").symlink_to(project.parent / "outside")
    (project / "leak.py").symlink_to(project.parent / "outside" / "leak.py")

    assert search(call_tool, query="zebra")["results"] == []
    refused = call_tool("search", query="secret", path="../outside")
    assert refused.status is ToolStatus.BLOCKED


def test_a_damaged_index_is_rebuilt(call_tool: CallTool, project: Path, settings: Settings) -> None:
    search(call_tool, query="retry")
    index = settings.platform_home / "search" / "tantivy"
    for child in index.iterdir():
        if child.is_file():
            child.write_bytes(b"garbage")

    assert top(search(call_tool, query="retry policy backoff"))[3] == "RetryPolicy"


def test_standard_library_symbols_rank_first(call_tool: CallTool, workspace: Path) -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for package in ("json", "asyncio", "email", "http"):
        shutil.copytree(
            stdlib / package, workspace / package, ignore=shutil.ignore_patterns("__pycache__")
        )

    decoder = search(call_tool, query="JSONDecoder", kind="symbol")
    gather = search(call_tool, query="gather", kind="symbol")
    cookie = search(call_tool, query="cookie jar", kind="symbol")

    assert top(decoder)[:3] == ("json/decoder.py", top(decoder)[1], "class")
    assert top(decoder)[3] == "JSONDecoder"
    assert (top(gather)[0], top(gather)[3]) == ("asyncio/tasks.py", "gather")
    assert (top(cookie)[0], top(cookie)[3]) == ("http/cookiejar.py", "CookieJar")
