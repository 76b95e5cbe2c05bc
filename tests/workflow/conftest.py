from __future__ import annotations

from pathlib import Path

import pytest
from tests.workflow.runner import Runner


@pytest.fixture
def run(tmp_path: Path) -> Runner:
    return Runner(tmp_path)
