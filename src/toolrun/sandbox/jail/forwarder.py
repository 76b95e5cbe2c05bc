"""The jail's way out to the allowlisting proxy: 127.0.0.1:PORT inside the network
namespace relayed to the proxy's unix socket outside it."""

from __future__ import annotations

import ctypes
import fcntl
import os
import select
import signal
import socket
import threading

PORT = 3128  # every jail has a loopback of its own, so one fixed port is always free
PROXY_VARS = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
NO_PROXY_VARS = ("NO_PROXY", "no_proxy")
_PR_SET_PDEATHSIG = 1
_CHUNK = 1 << 16
_CONNECT_TIMEOUT_S = 5.0
_IDLE_TIMEOUT_S = 60.0
_THREAD_STACK = 256 << 10  # relay threads need little; a lowered RLIMIT_AS stays usable


def proxy_env() -> dict[str, str]:
    """The variables that send a jailed command's HTTP(S) traffic to the forwarder."""
    url = f"http://127.0.0.1:{PORT}"
    return {**dict.fromkeys(PROXY_VARS, url), **dict.fromkeys(NO_PROXY_VARS, "")}


def start(proxy_socket: str) -> None:
    """Fork a child relaying 127.0.0.1:PORT (in this network namespace) to `proxy_socket`.

    The child dies with this process, holds none of its descriptors (a reader waiting for
    EOF on the command's output is not kept waiting), and stays in its process group so
    that whoever ends the group ends the forwarder too.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", PORT))
        listener.listen(64)
        parent = os.getpid()
        if os.fork() == 0:
            try:
                _forward(_detach(listener.detach(), parent), proxy_socket)
            finally:
                os._exit(1)
    finally:
        listener.close()


def _detach(listener_fd: int, parent: int) -> int:
    """Die with `parent` and let go of every descriptor but the listener's (returned, > 2)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the prctl took effect
        os._exit(0)
    keep = listener_fd if listener_fd > 2 else fcntl.fcntl(listener_fd, fcntl.F_DUPFD, 3)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 20)
    return keep


def _forward(listener_fd: int, proxy_socket: str) -> None:
    listener = socket.socket(fileno=listener_fd)
    threading.stack_size(_THREAD_STACK)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_tunnel, args=(client, proxy_socket), daemon=True).start()


def _tunnel(client: socket.socket, proxy_socket: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.settimeout(_CONNECT_TIMEOUT_S)
        upstream.connect(proxy_socket)
        relay(client, upstream, _IDLE_TIMEOUT_S)
    except OSError:
        return
    finally:
        upstream.close()
        client.close()


def relay(one: socket.socket, other: socket.socket, idle_s: float) -> None:
    """Copy bytes both ways until both sides stop sending, one fails, or `idle_s` passes idle.

    An end of input on one side is passed on as a write shutdown of the other, so
    half-closed exchanges (a request, then a response until EOF) complete. The caller
    closes both sockets.
    """
    peer = {one.fileno(): (one, other), other.fileno(): (other, one)}
    poller = select.poll()
    for fd, (sock, _) in peer.items():
        sock.settimeout(idle_s)  # bounds a sendall to a peer that stopped reading
        poller.register(fd, select.POLLIN)
    sending = len(peer)
    while sending:
        ready = poller.poll(idle_s * 1000)
        if not ready:
            return
        for fd, _ in ready:
            source, target = peer[fd]
            try:
                data = source.recv(_CHUNK)
                if data:
                    target.sendall(data)
                    continue
                poller.unregister(fd)
                sending -= 1
                target.shutdown(socket.SHUT_WR)
            except OSError:
                return
