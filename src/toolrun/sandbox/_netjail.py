"""Runs a command in a fresh network namespace where only loopback exists.

Usage: python -I -S _netjail.py [--proxy SOCKET] [--hide DIR]... [--check] -- COMMAND [ARG...]

Standalone, stdlib only, so that it starts fast and trusts nothing on sys.path. With
--proxy, a forwarder inside the namespace relays 127.0.0.1:PORT to the unix socket of an
allowlist proxy outside it, and the command gets the *_PROXY variables pointing there.
Each --hide DIR is covered by an empty read-only tmpfs in a private mount namespace, so
the command cannot read the platform's own state (its tokens, database, Redis password).
--check only sets the namespaces up. Exit codes: 126 when the namespace cannot be made (the
command never runs unconfined), 127 when the command cannot be executed.
"""

from __future__ import annotations

# The C halves of socket and signal: their public wrappers import enum, which would add
# about 10 ms to every jailed command's start. Only the forwarder loads the full modules.
import _signal  # type: ignore[import-not-found]  # typeshed has no stub for it
import _socket
import ctypes
import fcntl
import os
import select
import struct
import sys

CANNOT_ISOLATE = 126
CANNOT_EXEC = 127
PROXY_VARS = ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
NO_PROXY_VARS = ("NO_PROXY", "no_proxy")

_CLONE_NEWNET = 0x40000000
_CLONE_NEWNS = 0x00020000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
_MS_REC, _MS_PRIVATE = 0x4000, 0x40000
_CLONE_NEWUSER = 0x10000000
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_IFREQ = struct.Struct("16sH22x")  # struct ifreq: name, then the flags member of the union
_PR_SET_PDEATHSIG = 1
_CHUNK = 1 << 16
_CONNECT_TIMEOUT_S = 5.0
_IDLE_TIMEOUT_S = 60.0
_THREAD_STACK = 256 << 10  # relay threads need little; a lowered RLIMIT_AS stays usable


class JailError(Exception):
    """The network namespace could not be set up."""


def enter_namespace(hidden: list[str]) -> None:
    """Move this process into new network and mount namespaces, bring loopback up and
    cover each `hidden` directory.

    Root unshares the namespaces alone; anyone else (or root without CAP_SYS_ADMIN) gets
    a user namespace around them, mapping its own uid and gid 1:1.

    Raises:
        JailError: no namespace could be created or configured.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    wanted = _CLONE_NEWNET | _CLONE_NEWNS
    if uid != 0 or not _unshare(libc, wanted):
        if not _unshare(libc, _CLONE_NEWUSER | wanted):
            reason = os.strerror(ctypes.get_errno())
            raise JailError(f"cannot create a network namespace: {reason}")
        _map_ids(uid, gid)
    try:
        _loopback_up()
    except OSError as exc:
        raise JailError(f"cannot bring loopback up: {exc.strerror}") from exc
    _hide(libc, hidden)


def _hide(libc: ctypes.CDLL, hidden: list[str]) -> None:
    """Keep mounts from leaking out, then lay an empty read-only tmpfs over each directory."""
    if _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        raise JailError(f"cannot make mounts private: {os.strerror(ctypes.get_errno())}")
    flags = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    for directory in hidden:
        if not os.path.isdir(directory):
            continue
        if _mount(libc, "toolrun-hidden", directory, "tmpfs", flags, "size=4k,mode=0555") != 0:
            reason = os.strerror(ctypes.get_errno())
            raise JailError(f"cannot hide {directory}: {reason}")


def _mount(
    libc: ctypes.CDLL,
    source: str | None,
    target: str,
    kind: str | None,
    flags: int,
    data: str | None,
) -> int:
    def text(value: str | None) -> bytes | None:
        return None if value is None else value.encode()

    return int(libc.mount(text(source), text(target), text(kind), flags, text(data)))


def _unshare(libc: ctypes.CDLL, flags: int) -> bool:
    return int(libc.unshare(flags)) == 0


def _map_ids(uid: int, gid: int) -> None:
    """Map the caller's ids into its new user namespace so its files keep their owner."""
    try:
        if os.path.exists("/proc/self/setgroups"):  # kernels before 3.19 lack it
            _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    except OSError as exc:
        raise JailError(f"cannot map ids into the user namespace: {exc.strerror}") from exc


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


def _loopback_up() -> None:
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        current = fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, _IFREQ.pack(b"lo", 0))
        flags = _IFREQ.unpack(current)[1]
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, _IFREQ.pack(b"lo", flags | _IFF_UP))
    finally:
        sock.close()


def start_forwarder(proxy_socket: str) -> int:
    """Fork a child relaying 127.0.0.1:PORT (in this namespace) to `proxy_socket`; the port.

    The child dies with this process (which execs the command next), holds none of its
    descriptors (a reader waiting for EOF on the command's output is not kept waiting), and
    stays in its process group so that whoever ends the group ends the forwarder too.
    """
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        port: int = listener.getsockname()[1]
        parent = os.getpid()
        if os.fork() == 0:
            try:
                _forward(_detach(listener.detach(), parent), proxy_socket)
            finally:
                os._exit(1)
    finally:
        listener.close()
    return port


def _detach(listener_fd: int, parent: int) -> int:
    """Die with `parent` and let go of every descriptor but the listener's (returned, > 2)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the prctl took effect
        os._exit(0)
    keep = listener_fd if listener_fd > 2 else fcntl.fcntl(listener_fd, fcntl.F_DUPFD, 3)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    highest = max(int(name) for name in os.listdir("/proc/self/fd"))
    os.closerange(3, keep)
    os.closerange(keep + 1, highest + 1)
    return keep


def _forward(listener_fd: int, proxy_socket: str) -> None:
    import socket  # noqa: PLC0415 - see the note on the imports at the top
    import threading  # noqa: PLC0415

    listener = socket.socket(fileno=listener_fd)
    threading.stack_size(_THREAD_STACK)
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_tunnel, args=(client, proxy_socket), daemon=True).start()


def _tunnel(client: _socket.socket, proxy_socket: str) -> None:
    upstream = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        upstream.settimeout(_CONNECT_TIMEOUT_S)
        upstream.connect(proxy_socket)
        relay(client, upstream, _IDLE_TIMEOUT_S)
    except OSError:
        return
    finally:
        upstream.close()
        client.close()


def relay(one: _socket.socket, other: _socket.socket, idle_s: float) -> None:
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
                target.shutdown(_socket.SHUT_WR)
            except OSError:
                return


def proxy_env(port: int) -> dict[str, str]:
    """The variables that send a command's HTTP(S) traffic to the forwarder on `port`."""
    url = f"http://127.0.0.1:{port}"
    return {**dict.fromkeys(PROXY_VARS, url), **dict.fromkeys(NO_PROXY_VARS, "")}


def _parse(args: list[str]) -> tuple[str | None, list[str], bool, list[str]]:
    """Proxy socket, directories to hide, check-only flag, and command from the arguments.

    Raises:
        ValueError: the arguments are malformed.
    """
    if "--" not in args:
        raise ValueError("usage: _netjail.py [--proxy S] [--hide DIR]... [--check] -- COMMAND...")
    split = args.index("--")
    options, command = args[:split], args[split + 1 :]
    proxy, hidden, check = None, [], False
    while options:
        option = options.pop(0)
        if option == "--check":
            check = True
        elif option == "--proxy" and options:
            proxy = options.pop(0)
        elif option == "--hide" and options:
            hidden.append(options.pop(0))
        else:
            raise ValueError(f"unknown option {option!r}")
    if not command and not check:
        raise ValueError("no command given")
    return proxy, hidden, check, command


def main(args: list[str]) -> int:
    """Jail, then exec the command; an exit code only when that could not happen."""
    try:
        proxy, hidden, check, command = _parse(args)
        enter_namespace(hidden)
        port = start_forwarder(proxy) if proxy is not None else None
    except (ValueError, JailError, OSError) as exc:
        _say(str(exc))
        return CANNOT_ISOLATE
    if check:
        return 0
    env = dict(os.environ)
    if port is not None:
        env.update(proxy_env(port))
    # Python ignores these; the command should get the defaults, as subprocess gives them.
    for ignored_by_python in (_signal.SIGPIPE, _signal.SIGXFSZ):
        _signal.signal(ignored_by_python, _signal.SIG_DFL)
    try:
        os.execvpe(command[0], command, env)  # noqa: S606 - argv list, never a shell string
    except OSError as exc:
        _say(f"cannot run {command[0]}: {exc.strerror}")
    return CANNOT_EXEC


def _say(message: str) -> None:
    print(f"netjail: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
