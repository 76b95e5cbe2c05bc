"""The process environment as toolrun's settings read it: variable names in any case."""

from __future__ import annotations

import os


def variables() -> dict[str, str]:
    """Every environment variable by its lower-case name; of two spellings of one name
    (TOOLRUN_API and toolrun_api), the one the environment lists last wins."""
    return {name.lower(): value for name, value in os.environ.items()}
