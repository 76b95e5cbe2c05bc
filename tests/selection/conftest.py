"""The embedding model, for tests of selection by meaning: skipped where it is not
installed, except under CI (CI=true), which installs it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

from toolrun.selection.semantic import EncoderUnavailable, load_encoder

if TYPE_CHECKING:
    from toolrun.selection.minilm import Encoder


@pytest.fixture(scope="session")
def encoder() -> Encoder:
    try:
        return load_encoder()
    except EncoderUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the embedding model: {exc}")
        pytest.skip(str(exc))
