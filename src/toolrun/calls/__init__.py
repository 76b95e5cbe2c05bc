"""Call records: the state of every call the platform accepted, shared by API and workers."""

from toolrun.calls.store import AsyncCallStore, CallStore

__all__ = ["AsyncCallStore", "CallStore"]
