"""The history of every call: one row per call, written by the API and the workers."""

from toolrun.history.records import CallRecord, record_of
from toolrun.history.store import HistoryFilter, HistoryPage, HistoryStore

__all__ = ["CallRecord", "HistoryFilter", "HistoryPage", "HistoryStore", "record_of"]
