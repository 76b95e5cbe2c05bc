"""Running plugin modules: one wasmtime Store per call, under caps that end it cleanly.

- CPU: fuel (wasm instructions, roughly); out of fuel traps.
- Memory: the Store's memory limit; growing past it fails (malloc returns NULL).
- Wall time: epoch interruption; a ticker thread advances the engine's epoch every
  TICK_S while some plugin runs (idle otherwise), and each Store's deadline is its time
  limit in ticks. WASI's poll_oneoff (sleep,
  waiting on a clock) answers ENOSYS: a host-side sleep could not be interrupted.
- Output: stdout beyond its cap is dropped and the call fails; stderr (diagnostics
  only) beyond its cap is dropped and the call goes on.

Compiled modules are cached in memory (the MODULES_IN_MEMORY used last) and on disk
(serialized, keyed by the module's SHA-256 and the wasmtime version and machine), so a
warm call never compiles and a restarted worker only loads.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.metadata
import math
import os
import platform
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import wasmtime

from toolrun.plugins.module import WASI_MODULE, check_module

TICK_S = 0.01
MEMORY_NEAR_CAP = 0.875
ERRNO_NOSYS = 52  # WASI's "function not supported"
MODULES_IN_MEMORY = 64  # compiled modules kept per process; the rest load from disk
# Per call: one module instance with its tables (a C program has one, for indirect calls).
MAX_INSTANCES = 1
MAX_TABLES = 4
MAX_TABLE_ELEMENTS = 100_000
ENGINE_KEY = f"wasmtime-{importlib.metadata.version('wasmtime')}-{platform.machine()}"
WORKSPACE_GUEST_PATH = "/workspace"


@dataclass(frozen=True)
class PluginLimits:
    """Caps of one call."""

    fuel: int = 5_000_000_000
    memory_bytes: int = 64 * 2**20
    time_s: float = 10.0
    stdin_bytes: int = 1 * 2**20
    stdout_bytes: int = 1 * 2**20
    stderr_bytes: int = 64 * 2**10


@dataclass(frozen=True)
class PluginRun:
    """How one call of a module ended. `limit` names the cap it ran into, if any."""

    exit_code: int | None  # None: it trapped
    stdout: bytes
    stderr: bytes
    fuel_used: int
    limit: str | None = None
    trap: str | None = None


class _Capped:
    """A stream sink keeping at most `cap` bytes."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.overflowed = False

    def write(self, chunk: bytes) -> int:
        room = self.cap - len(self.data)
        if len(chunk) > room:
            self.overflowed = True
        self.data += chunk[: max(room, 0)]
        return len(chunk)


class WasmRuntime:
    """One engine for the process: compiled-module caches and the epoch ticker."""

    def __init__(self, cache_dir: Path | None = None) -> None:
        config = wasmtime.Config()
        config.consume_fuel = True
        config.epoch_interruption = True
        # The memory cap applies to each linear memory: a module gets one.
        config.wasm_multi_memory = False
        # Compiling on wasmtime's thread pool deadlocks in a process forked after the
        # pool started (a prefork worker child); plugins are small enough for one thread.
        config.parallel_compilation = False
        self.engine = wasmtime.Engine(config)
        self.linker = wasmtime.Linker(self.engine)
        self.linker.define_wasi()
        # WASI's poll_oneoff sleeps in the host, where epoch interruption cannot end it:
        # a plugin may not sleep or wait (it answers ENOSYS), so its time limit holds.
        self.linker.allow_shadowing = True
        i32 = wasmtime.ValType.i32()
        self.linker.define_func(
            WASI_MODULE, "poll_oneoff", wasmtime.FuncType([i32] * 4, [i32]), _no_waiting
        )
        self.cache_dir = cache_dir
        self.compiles = 0  # modules compiled (not loaded from a cache) by this runtime
        self._modules: OrderedDict[str, wasmtime.Module] = OrderedDict()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._running = 0  # plugin runs under way: the ticker ticks only while there are some
        self._running_lock = threading.Lock()  # not `_lock`: compiling must not delay a run
        self._busy = threading.Event()
        self._ticker = threading.Thread(target=self._tick, name="wasm-epoch", daemon=True)
        self._ticker.start()
        atexit.register(self.close)

    def module(self, data: bytes) -> wasmtime.Module:
        """The compiled module of `data`: from memory, from the disk cache, or compiled
        (and checked: see `check_module`) and cached."""
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            found = self._modules.get(digest)
            if found is None:
                found = self._modules[digest] = self._load(digest, data)
                while len(self._modules) > MODULES_IN_MEMORY:
                    self._modules.popitem(last=False)
            self._modules.move_to_end(digest)
            return found

    def run(
        self,
        module: wasmtime.Module,
        stdin: bytes,
        limits: PluginLimits,
        *,
        workspace: Path | None = None,
        writable: bool = False,
    ) -> PluginRun:
        """Run the module's ``_start`` once with `stdin`; `workspace`, if given, is
        preopened at /workspace (read-only unless `writable`)."""
        store = wasmtime.Store(self.engine)
        store.set_fuel(limits.fuel)
        store.set_limits(
            memory_size=limits.memory_bytes,
            memories=1,
            instances=MAX_INSTANCES,
            tables=MAX_TABLES,
            table_elements=MAX_TABLE_ELEMENTS,
        )
        store.set_epoch_deadline(max(1, math.ceil(limits.time_s / TICK_S)))
        stdout, stderr = _Capped(limits.stdout_bytes), _Capped(limits.stderr_bytes)
        with tempfile.NamedTemporaryFile(prefix="toolrun-stdin-") as stdin_file:
            stdin_file.write(stdin)
            stdin_file.flush()
            wasi = wasmtime.WasiConfig()
            wasi.argv = ["plugin"]
            wasi.stdin_file = stdin_file.name
            wasi.stdout_custom = stdout.write
            wasi.stderr_custom = stderr.write
            if workspace is not None:
                wasi.preopen_dir(str(workspace), WORKSPACE_GUEST_PATH, writable)
            store.set_wasi(wasi)
            self._running_one(+1)
            try:
                exit_code, trap, memory = self._start(store, module)
            finally:
                self._running_one(-1)
        used = limits.fuel - store.get_fuel()
        store.close()
        failed = trap is not None or exit_code != 0
        limit = _limit_hit(limits, failed, trap, memory, stdout)
        return PluginRun(exit_code, bytes(stdout.data), bytes(stderr.data), used, limit, trap)

    def close(self) -> None:
        """Stop the ticker and drop the engine (before interpreter exit: wasmtime's
        threads must not outlive Python)."""
        if self._stop.is_set():
            return
        with self._running_lock:  # a run ending now cannot put the ticker back to sleep
            self._stop.set()
            self._busy.set()  # wakes an idle ticker, which then sees the stop
        self._ticker.join()  # it must not touch the engine once that is gone
        self._modules.clear()
        self.linker.close()
        self.engine.close()
        atexit.unregister(self.close)

    def _start(
        self, store: wasmtime.Store, module: wasmtime.Module
    ) -> tuple[int | None, str | None, int]:
        """(exit code or None, trap message or None, bytes of memory at the end)."""
        instance = None
        exit_code: int | None = 0
        trap = None
        try:
            instance = self.linker.instantiate(store, module)
            start = instance.exports(store)["_start"]
            if not isinstance(start, wasmtime.Func):
                return None, "_start is not a function", 0
            start(store)
        except wasmtime.ExitTrap as exited:
            exit_code = exited.code
        except (wasmtime.Trap, wasmtime.WasmtimeError) as error:
            exit_code, trap = None, _trap_message(error)
        memory = instance.exports(store).get("memory") if instance is not None else None
        size = memory.data_len(store) if isinstance(memory, wasmtime.Memory) else 0
        return exit_code, trap, size

    def _load(self, digest: str, data: bytes) -> wasmtime.Module:
        path = None if self.cache_dir is None else self.cache_dir / f"{digest}.{ENGINE_KEY}.cwasm"
        if path is not None and path.exists():
            try:
                return wasmtime.Module.deserialize_file(self.engine, str(path))
            except wasmtime.WasmtimeError:
                path.unlink(missing_ok=True)  # stale or damaged: compile again
        module = check_module(self.engine, data)
        self.compiles += 1
        if path is not None:
            _write_atomically(path, bytes(module.serialize()))
        return module

    def _running_one(self, change: int) -> None:
        with self._running_lock:
            self._running += change
            if self._running or self._stop.is_set():
                self._busy.set()
            else:
                self._busy.clear()

    def _tick(self) -> None:
        while self._busy.wait() and not self._stop.wait(TICK_S):
            self.engine.increment_epoch()


def _no_waiting(*_: int) -> int:
    return ERRNO_NOSYS


def _limit_hit(
    limits: PluginLimits,
    failed: bool,
    trap: str | None,
    memory: int,
    stdout: _Capped,
) -> str | None:
    """Which cap ended the call, in words; None when it ended on its own. A memory limit
    shows only as a failed grow (malloc returning NULL), so a call that failed with its
    memory near the cap is taken to have run into it."""
    if stdout.overflowed:
        return f"output limit exceeded: more than {limits.stdout_bytes} bytes on stdout"
    if trap == "out of fuel":
        return f"CPU limit exceeded: {limits.fuel} units of fuel used"
    if trap == "interrupt":
        return f"time limit exceeded: ran longer than {limits.time_s:g} s"
    if failed and memory > limits.memory_bytes * MEMORY_NEAR_CAP:
        return f"memory limit exceeded: {limits.memory_bytes} bytes"
    return None


def _trap_message(error: Exception) -> str:
    """``unreachable``, ``out of fuel``, ...: the trap's code when it has one."""
    code = getattr(error, "trap_code", None)
    if code is not None:
        return str(code.name).lower().replace("_", " ")
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".cwasm-")
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
