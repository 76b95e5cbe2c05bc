"""Public names imported on first use (PEP 562), so importing a package costs nothing
until one of its names is used: the CLI starts fast, and the jail's launcher, which has
the standard library only, can import its own modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports each name of `homes` from its module."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(home), name)

    return __getattr__
