"""The formats history is exported in (standard library only)."""

from __future__ import annotations

from typing import Literal

ExportFormat = Literal["csv", "json"]
