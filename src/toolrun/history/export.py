"""History rows as CSV (RFC 4180, for spreadsheets) or JSON, produced piece by piece.

CSV: a UTF-8 byte order mark (so spreadsheets read UTF-8), a header, CRLF line ends, quotes
where needed; `arguments` is a JSON text; a text cell that starts with = + - @ a tab, a
carriage return or ' gets a leading ' so a spreadsheet shows it instead of running it as a
formula (`read_cell` undoes that). JSON: an array of the rows GET /v1/history returns. Rows
are `NamedCall`s: a row without `agent_name` exports that cell empty.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

from toolrun.history.formats import ExportFormat
from toolrun.history.records import NamedCall

_FIELDS = NamedCall.model_fields
# The agent's name beside its id.
COLUMNS = ["call_id", "agent_id", "agent_name"]
COLUMNS += [name for name in _FIELDS if name not in COLUMNS]
MEDIA_TYPES: dict[ExportFormat, str] = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
}
_TEXT = {name for name, info in _FIELDS.items() if info.annotation in (str, str | None)}
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")
_ROWS_PER_PIECE = 200


def export(rows: Iterable[dict[str, Any]], kind: ExportFormat) -> Iterator[str]:
    """The rows in `kind`, as pieces of text to write or send in order."""
    return _csv(rows) if kind == "csv" else _json(rows)


def _csv(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # RFC 4180: "," separators, CRLF, doubled quotes
    buffer.write("\ufeff")
    writer.writerow(COLUMNS)
    for n, row in enumerate(rows, 1):
        writer.writerow([_cell(name, row.get(name)) for name in COLUMNS])
        if n % _ROWS_PER_PIECE == 0:
            yield _drain(buffer)
    yield _drain(buffer)


def _json(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    yield "["
    separator = "\n"
    for row in rows:
        yield separator + json.dumps(row, separators=(",", ":"), ensure_ascii=False)
        separator = ",\n"
    yield "\n]\n"


def _cell(name: str, value: Any) -> str:
    if value is None:
        return ""
    if name == "arguments":
        return json.dumps(value, ensure_ascii=False)
    if name in _TEXT and str(value).startswith(_FORMULA_STARTS):
        return "'" + str(value)
    return repr(value) if isinstance(value, float) else str(value)


def read_cell(name: str, text: str) -> Any:
    """A CSV cell back as the value it was exported from."""
    field = _FIELDS[name]
    if text == "":
        return None if not field.is_required() else text
    if name == "arguments":
        return json.loads(text)
    if name in _TEXT:
        return text[1:] if text.startswith("'") else text
    return int(text) if field.annotation in (int, int | None) else float(text)


def _drain(buffer: io.StringIO) -> str:
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text
