"""A call's history row as the workers' drainers write it."""

from __future__ import annotations

from toolrun.history.records import CallRecord, record_of, row_of
from toolrun.tools.model import ToolResult, ToolStatus


def test_a_row_has_every_column_of_the_history_table() -> None:
    """`row_of` is what the workers' drainers write: a column it left out would be
    written as NULL over an earlier row's value."""
    ended = ToolResult(
        call_id="c1",
        tool_name="read",
        status=ToolStatus.SUCCESS,
        metadata={"queued_at": 1.0, "finished_at": 2.0},
    )

    row = row_of(ended, {}, None)

    table = CallRecord.__table__  # type: ignore[attr-defined]
    assert set(row) == {column.name for column in table.columns}
    assert record_of(ended, {}, None).model_dump() == row
