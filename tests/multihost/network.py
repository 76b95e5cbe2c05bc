"""Test hosts on one machine: network namespaces joined to this one by veth pairs.

This namespace is the core host (Redis, the API, PostgreSQL); each `Host` is a namespace
of its own whose only way out is its veth pair, so cutting the pair's link cuts the host
off the network, as a pulled cable would. PostgreSQL listens on loopback only: a relay
here forwards each host's connections to it (`Relay`), through that host's link.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

IP = shutil.which("ip") or "/usr/sbin/ip"  # Debian's iproute2


def _ip(*args: str) -> None:
    subprocess.run([IP, *args], check=True, capture_output=True, timeout=10)


@dataclass
class Host:
    """A namespace `netns`, reached from the core at `address` through its link; the core
    is `core_address` from inside it."""

    name: str
    netns: str
    link: str  # the core's end of the veth pair
    address: str
    core_address: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(
        self, argv: Sequence[str], env: Mapping[str, str], log: Path
    ) -> subprocess.Popen[bytes]:
        """Run `argv` in this host (a session of its own, output to `log`)."""
        with log.open("ab") as sink:
            process = subprocess.Popen(
                [IP, "netns", "exec", self.netns, *argv],
                env=dict(env),
                stdout=sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.processes.append(process)
        return process

    def pids(self) -> list[int]:
        listed = subprocess.run(
            [IP, "netns", "pids", self.netns], capture_output=True, text=True, check=True
        )
        return [int(pid) for pid in listed.stdout.split()]

    def cut(self) -> None:
        """Pull the cable: nothing goes in or out until `mend`."""
        _ip("link", "set", self.link, "down")

    def mend(self) -> None:
        _ip("link", "set", self.link, "up")

    def lose(self) -> None:
        """The host is gone for good: every process in it killed at once."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for process in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)


@dataclass
class Network:
    """Hosts made by `add`, all removed by `close`."""

    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    hosts: list[Host] = field(default_factory=list)

    def add(self, name: str) -> Host:
        index = len(self.hosts) + 1
        netns = f"tr{self.tag}{name}"
        ours, theirs = f"tr{self.tag}{index}a", f"tr{self.tag}{index}b"
        subnet = f"10.{200 + index}.{int(self.tag[:2], 16)}"
        host = Host(name, netns, ours, f"{subnet}.2", f"{subnet}.1")
        _ip("netns", "add", netns)
        self.hosts.append(host)
        _ip("link", "add", ours, "type", "veth", "peer", "name", theirs)
        _ip("link", "set", theirs, "netns", netns)
        _ip("addr", "add", f"{host.core_address}/30", "dev", ours)
        _ip("link", "set", ours, "up")
        inside = ["netns", "exec", netns, "ip"]
        _ip(*inside, "addr", "add", f"{host.address}/30", "dev", theirs)
        _ip(*inside, "link", "set", theirs, "up")
        _ip(*inside, "link", "set", "lo", "up")
        return host

    def close(self) -> None:
        for host in self.hosts:
            host.lose()
            with contextlib.suppress(subprocess.CalledProcessError):
                _ip("link", "del", host.link)
            with contextlib.suppress(subprocess.CalledProcessError):
                _ip("netns", "del", host.netns)


def namespaces_unavailable() -> str | None:
    """Why test hosts cannot be made here (None: they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = f"trprobe{uuid.uuid4().hex[:6]}"
    try:
        _ip("netns", "add", probe)
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"cannot make a network namespace: {exc}"
    _ip("netns", "del", probe)
    return None


class Relay:
    """Forwards TCP connections made to (`host`, `port`) here to `target`, a thread per
    direction of each connection; `close` stops listening and drops every connection."""

    def __init__(self, host: str, port: int, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server((host, port))
        self._sockets: list[socket.socket] = [self._listener]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()

    def close(self) -> None:
        self._closed = True
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
