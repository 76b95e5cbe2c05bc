"""The history of every call: one row per call, written by the API and the workers.

Names are imported on first use: `history.formats` (what the CLI's options name) does not
bring SQLModel with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolrun._lazy import exports

if TYPE_CHECKING:
    from toolrun.history.records import CallRecord, record_of
    from toolrun.history.store import HistoryFilter, HistoryPage, HistoryStore

_HOMES = {
    **dict.fromkeys(("CallRecord", "record_of"), "toolrun.history.records"),
    **dict.fromkeys(("HistoryFilter", "HistoryPage", "HistoryStore"), "toolrun.history.store"),
}
__all__ = ["CallRecord", "HistoryFilter", "HistoryPage", "HistoryStore", "record_of"]
__getattr__ = exports(__name__, _HOMES)
