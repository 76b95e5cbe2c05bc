"""The lsp tool against a real jedi-language-server on a fixture package."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from toolrun.config import Settings
from toolrun.permissions.approvals import AutoApprover
from toolrun.tools import Executor, ToolCall, ToolContext, ToolRegistry, ToolResult, ToolStatus
from toolrun.tools.builtin.lsp import LspTool

SHAPES = '''class Circle:
    """A circle of a given radius."""

    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        """The area, pi times r squared."""
        return 3.14159 * self.radius**2


def make_circle(radius: float) -> Circle:
    return Circle(radius)
'''
MAIN = """from pkg.shapes import Circle, make_circle

café = make_circle(2.0)
print(café.area(), Circle(1).radius)
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lsp") / "project"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "shapes.py").write_text(SHAPES)
    (root / "pkg" / "main.py").write_text(MAIN)
    (root.parent / "outside.py").write_text("SECRET = 1\n")
    return root


@pytest.fixture(scope="module")
def tool() -> Iterator[LspTool]:
    """One tool (and so one warm server) for the module's tests."""
    tool = LspTool()
    yield tool
    tool.pool_close()


@pytest.fixture
def lsp(project: Path, tool: LspTool, tmp_path: Path) -> Any:
    settings = Settings(workspace=project, home=tmp_path / "home")
    ctx = ToolContext.create(settings, approver=AutoApprover())
    executor = Executor(ToolRegistry([tool]))

    def call(**arguments: Any) -> ToolResult:
        return executor.execute(ToolCall(tool_name="lsp", arguments=arguments), ctx)

    return call


def ok(result: ToolResult) -> dict[str, Any]:
    assert result.status is ToolStatus.SUCCESS, result.error
    output: dict[str, Any] = result.output
    return output


def test_definition_across_modules_by_symbol_name(lsp: Any) -> None:
    found = ok(lsp(operation="definition", file_path="pkg/main.py", symbol="make_circle", line=3))

    assert found["position"] == {"path": "pkg/main.py", "line": 3, "column": 8}
    assert found["locations"] == [
        {
            "path": "pkg/shapes.py",
            "line": 12,
            "column": 5,
            "text": "def make_circle(radius: float) -> Circle:",
            "location": "pkg/shapes.py:12:5",
        }
    ]


def test_a_column_after_non_ascii_text_is_counted_in_characters(lsp: Any) -> None:
    # "print(café.area()": `area` starts at column 12 (é is one character, two UTF-8 bytes).
    found = ok(lsp(operation="definition", file_path="pkg/main.py", line=4, column=12))

    assert [place["location"] for place in found["locations"]] == ["pkg/shapes.py:7:9"]


def test_references_find_every_use(lsp: Any) -> None:
    found = ok(lsp(operation="references", file_path="pkg/shapes.py", symbol="Circle"))

    assert sorted(place["location"] for place in found["locations"]) == sorted(
        [
            "pkg/main.py:1:24",
            "pkg/main.py:4:20",
            "pkg/shapes.py:1:7",
            "pkg/shapes.py:12:35",
            "pkg/shapes.py:13:12",
        ]
    )


def test_hover_shows_the_signature_and_docstring(lsp: Any) -> None:
    found = ok(lsp(operation="hover", file_path="pkg/main.py", line=4, column=12))

    assert "def area() -> float" in found["hover"]
    assert "The area, pi times r squared." in found["hover"]


def test_document_and_workspace_symbols(lsp: Any) -> None:
    document = ok(lsp(operation="document_symbols", file_path="pkg/shapes.py"))["symbols"]
    by_name = {symbol["name"]: symbol for symbol in document}

    assert (by_name["Circle"]["kind"], by_name["Circle"]["location"]) == (
        "class",
        "pkg/shapes.py:1:7",
    )
    assert (by_name["area"]["kind"], by_name["area"]["container"]) == ("method", "Circle")
    assert by_name["make_circle"]["kind"] == "function"
    workspace = ok(lsp(operation="workspace_symbols", query="make_circle"))["symbols"]
    assert "pkg/shapes.py:12:5" in [symbol["location"] for symbol in workspace]


def test_the_server_writes_nothing_into_the_workspace(lsp: Any, project: Path) -> None:
    ok(lsp(operation="hover", file_path="pkg/main.py", symbol="make_circle"))

    assert [path.name for path in project.rglob(".*")] == []  # no .cache, no state


def test_diagnostics_report_a_syntax_error(lsp: Any, project: Path) -> None:
    broken = project / "pkg" / "broken.py"
    broken.write_text("def oops(:\n    pass\n")

    found = ok(lsp(operation="diagnostics", file_path="pkg/broken.py"))["diagnostics"]

    assert found
    assert found[0]["severity"] == "error"
    assert found[0]["path"] == "pkg/broken.py"
    assert found[0]["line"] == 1
    broken.write_text("def fixed():\n    pass\n")  # the next call sends the new text
    assert ok(lsp(operation="diagnostics", file_path="pkg/broken.py"))["diagnostics"] == []


@pytest.mark.parametrize("path", ["../outside.py", "/etc/passwd"])
def test_files_outside_the_workspace_are_refused(lsp: Any, path: str) -> None:
    result = lsp(operation="document_symbols", file_path=path)

    assert result.status is ToolStatus.BLOCKED


def test_bad_positions_are_clear_errors(lsp: Any) -> None:
    missing = lsp(operation="definition", file_path="pkg/main.py", symbol="nowhere")
    past_end = lsp(operation="hover", file_path="pkg/main.py", line=99)
    no_position = lsp(operation="hover", file_path="pkg/main.py")

    assert missing.error == "symbol 'nowhere' does not appear in the file"
    assert past_end.error == "line 99 is outside the file (it has 4 lines)"
    assert no_position.error == "hover needs line (and column) or symbol"


def test_a_missing_server_is_a_clear_error(project: Path, tmp_path: Path) -> None:
    (project / "lib.rs").write_text("fn main() {}\n")
    settings = Settings(
        workspace=project, home=tmp_path / "home", lsp_servers={"rust": ["no-such-analyzer"]}
    )
    ctx = ToolContext.create(settings)
    call = ToolCall(
        tool_name="lsp", arguments={"operation": "document_symbols", "file_path": "lib.rs"}
    )

    result = Executor(ToolRegistry([LspTool()])).execute(call, ctx)

    assert result.status is ToolStatus.ERROR
    assert result.error is not None
    assert result.error.startswith("no language server for rust: no-such-analyzer is not installed")


def test_the_server_stays_warm_and_a_dead_one_is_restarted(lsp: Any, tool: LspTool) -> None:
    ok(lsp(operation="document_symbols", file_path="pkg/shapes.py"))
    (first,) = tool.pool_sessions()
    ok(lsp(operation="document_symbols", file_path="pkg/main.py"))
    assert tool.pool_sessions() == [first]  # reused

    os.killpg(first.process.pid, signal.SIGKILL)
    first.process.wait()
    found = ok(lsp(operation="definition", file_path="pkg/main.py", symbol="make_circle", line=3))

    (second,) = tool.pool_sessions()
    assert second is not first
    assert second.alive
    assert [place["location"] for place in found["locations"]] == ["pkg/shapes.py:12:5"]


def test_closing_the_pool_leaves_no_server(project: Path, tmp_path: Path) -> None:
    tool = LspTool()
    settings = Settings(workspace=project, home=tmp_path / "home")
    call = ToolCall(
        tool_name="lsp", arguments={"operation": "document_symbols", "file_path": "pkg/shapes.py"}
    )
    ok(Executor(ToolRegistry([tool])).execute(call, ToolContext.create(settings)))
    (session,) = tool.pool_sessions()
    pid = session.process.pid

    tool.pool_close()

    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
