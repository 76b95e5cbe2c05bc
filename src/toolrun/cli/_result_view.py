"""A tool call's result for a person: the status line first, then the output — text as it
is, a command's stdout and stderr under their labels, a list of records as a table, a
list of names one a line, the remaining fields on one line (`--json` prints it whole)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.table import Table

from toolrun.cli._console import EXIT_NOT_ENDED, EXIT_TOOL_FAILED, err, inert, out

if TYPE_CHECKING:
    from toolrun.tools.model import ToolResult

_TEXT = "content"
_STREAMS = ("stdout", "stderr")  # a command's: labelled, as either may be empty
_TABLE_ROWS = 200  # more rows: the first ones and how many were left out


def show_result(result: ToolResult, *, as_json: bool) -> None:
    """Print `result` (as JSON, or for a person) and end with its exit code: 0 success,
    1 any other ending, 3 not ended yet."""
    if as_json:
        sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    else:
        print_result(result)
    if not result.final:
        raise typer.Exit(EXIT_NOT_ENDED)
    if not result.ok:
        raise typer.Exit(EXIT_TOOL_FAILED)


def print_result(result: ToolResult) -> None:
    """The status line (stderr), then the output (stdout)."""
    _note(_status_line(result))
    if not result.final:
        _note(f"not ended yet; see it with `toolrun calls show {result.call_id} --wait 60`")
    output: Any = result.output
    if isinstance(output, dict):
        _print_fields(output)
    elif output is not None:
        _print_value(output)


def _status_line(result: ToolResult) -> str:
    colour = "green" if result.ok else ("yellow" if not result.final else "red")
    elapsed = result.metadata.get("execution_time_ms")
    took = f" in {elapsed:.1f} ms" if isinstance(elapsed, int | float) else ""
    line = (
        f"[{colour}]{result.status}[/] {escape(result.tool_name)} "
        f"{result.tool_version or ''}{took} (call {result.call_id})"
    )
    return line + (f" — {escape(result.error)}" if result.error else "")


def _print_fields(output: dict[str, Any]) -> None:
    if output.get(_TEXT):
        _write_text(str(output[_TEXT]))
    if any(key in output for key in _STREAMS):
        for key in _STREAMS:
            text = output.get(key) or ""
            out.print(f"[dim]── {key}{'' if text else ' (empty)'} ──[/]", highlight=False)
            if text:
                _write_text(str(text))
    rest = {k: v for k, v in output.items() if k not in (_TEXT, *_STREAMS) and v is not None}
    scalars = {k: v for k, v in rest.items() if not isinstance(v, dict | list)}
    for key, value in rest.items():
        if key not in scalars and not _print_value(value, title=key):
            out.print_json(data={key: value})
    if scalars:
        shown = " · ".join(f"{key} {_scalar(value)}" for key, value in scalars.items())
        _note(f"[dim]{escape(shown)}[/]")


def _print_value(value: Any, *, title: str | None = None) -> bool:
    """Print a list of names or of flat records in its own form; False where it has
    none (the caller prints JSON)."""
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        _write_text("\n".join(inert(v) for v in value))  # names: one a line
        return True
    if isinstance(value, list) and value and all(_flat_record(v) for v in value):
        columns = list(dict.fromkeys(key for record in value for key in record))
        table = Table(*(escape(inert(c)) for c in columns), title=title, title_justify="left")
        for record in value[:_TABLE_ROWS]:
            table.add_row(*(escape(inert(_scalar(record.get(c)))) for c in columns))
        out.print(table)
        if len(value) > _TABLE_ROWS:
            _note(f"… {len(value) - _TABLE_ROWS} more rows (--json shows them all)")
        return True
    if title is None:
        out.print_json(data=value)
        return True
    return False


def _flat_record(value: Any) -> bool:
    return isinstance(value, dict) and all(not isinstance(v, dict | list) for v in value.values())


def _scalar(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _write_text(text: str) -> None:
    sys.stdout.write(text.rstrip("\n") + "\n")


def _note(markup: str) -> None:
    """A line on stderr, after what stdout holds so far (the two stay in order)."""
    sys.stdout.flush()
    err.print(markup, highlight=False)
