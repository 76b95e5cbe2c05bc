"""The network allowlist: which hosts tool processes (through the proxy) and http_fetch
may reach.

A jailed process runs in a fresh network namespace with only loopback up, so it reaches
nothing, not even the host's 127.0.0.1 (see `jail.confine`). With an allowlist, the jail
relays a loopback port to an `AllowlistProxy` and points the *_PROXY variables there:
HTTP and HTTPS (CONNECT) to allowlisted hosts is then all the network it has.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")


@dataclass(frozen=True)
class NetworkPolicy:
    """Hosts a jailed command may reach through the proxy; everything else is refused.

    Patterns: "example.com" (that host only), "*.example.com" (its subdomains, not the
    apex), IP literals. Case and a trailing dot do not matter.

    Raises:
        ValueError: a pattern is not a host name, wildcard or IP literal.
    """

    allowed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "allowed", tuple(_pattern(entry) for entry in self.allowed))

    def allows(self, host: str) -> bool:
        """Whether `host`, as named in a request, matches one of the patterns."""
        name = _normalize(host)
        if not name:
            return False
        if _ip(name) is not None:
            return name in self.allowed
        if not _is_name(name):
            return False
        return any(
            name.endswith(pattern[1:]) if pattern.startswith("*.") else name == pattern
            for pattern in self.allowed
        )


def _pattern(entry: str) -> str:
    """The canonical form of one allowlist entry."""
    if not entry.strip():
        raise ValueError("network allowlist entry is empty")
    if any(char.isspace() for char in entry):
        raise ValueError(f"network allowlist entry {entry!r} contains whitespace")
    if "/" in entry or "://" in entry:
        raise ValueError(f"network allowlist entry {entry!r} must be a host name, not a URL")
    name = _normalize(entry)
    if _ip(name) is not None:
        return name
    if name == "*":
        raise ValueError("network allowlist entry '*' would allow every host: list them")
    if "*" in name.removeprefix("*."):
        raise ValueError(
            f"network allowlist entry {entry!r}: '*' may only be a whole first label ('*.')"
        )
    if ":" in name:
        raise ValueError(f"network allowlist entry {entry!r} must not have a port")
    if not _is_name(name.removeprefix("*.")):
        raise ValueError(f"network allowlist entry {entry!r} is not a host name or IP address")
    return name


def _normalize(host: str) -> str:
    """Lower case, no trailing dot, IPv6 brackets dropped, IP literals in canonical form."""
    name = host.strip().lower().removesuffix(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    address = _ip(name)
    return name if address is None else str(address)


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def _is_name(name: str) -> bool:
    """A DNS name whose last label is not numeric (so "127.1" or "2130706433" are not)."""
    labels = name.split(".")
    return (
        len(name) <= 253
        and all(_LABEL.fullmatch(label) for label in labels)
        and not labels[-1].isdigit()
    )
