"""Project search: a BM25 index of each workspace's code and docs, with the definitions
tree-sitter finds, kept up to date from file modification times."""

from __future__ import annotations

from toolrun.search.index import Hit, SearchIndex, Update

__all__ = ["Hit", "SearchIndex", "Update"]
