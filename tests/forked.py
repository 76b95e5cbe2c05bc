"""Run a function in a forked copy of the test process and get back what it printed."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

DEADLINE_S = 30.0


def in_forked_child(run: Callable[[], str]) -> str:
    """`run()`'s answer, computed in a forked child (it shares nothing with this process
    from then on); fails if the child raises, or is killed after DEADLINE_S."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child answers through the pipe
        code = 1
        try:
            os.write(write, run().encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    deadline = time.monotonic() + DEADLINE_S
    while (done := os.waitpid(child, os.WNOHANG))[0] == 0:
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            os.close(read)
            raise AssertionError(f"the forked child did not end within {DEADLINE_S:g} s")
        time.sleep(0.01)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read().decode()
    assert os.waitstatus_to_exitcode(done[1]) == 0, "the forked child failed"
    return answer
