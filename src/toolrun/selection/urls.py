"""A URL built from a template, for step 5 (`arguments`): the task's URL or the one its
parameter's description shows with placeholders ("https://{ip}/api/nodes",
"https://<ip>/nodes?fabricName={fabricName}"), each placeholder filled from the task —
an IPv4 address for one named for a host, else the value another parameter of that
name took ("fabric fab-ed" for fabricName), percent-encoded."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

# A URL, placeholders and all ("https://<ip>/nodes?fabricName={fabricName}").
_URL = re.compile(r"https?://(?:<\w+>|[^\s\"'<>])*(?:<\w+>|[^\s\"'<>.,;:!?)])")
_PLACEHOLDER = re.compile(r"\{(\w+)\}|<(\w+)>")
_IP_ADDRESS = re.compile(r"(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.]*\w)")
HOST_WORDS = frozenset({"ip", "host", "hostname", "server", "address", "ip_address"})


def templated_url(
    given: str | None, description: str, task: str, values: Mapping[str, Any]
) -> str | None:
    """The URL `given` (the task's, if any) or, where the task gives none, the one
    `description` shows, with each placeholder filled (an IP address the task writes for
    "{ip}", the value `values` holds for "{fabricName}"); None where there is no template
    or a placeholder the task leaves open."""
    template = given if given is not None else next(iter(_URL.findall(description)), None)
    if template is None or not _PLACEHOLDER.search(template):
        return None
    addresses = [found for found in _IP_ADDRESS.findall(task) if _an_address(found)]

    def fill(match: re.Match[str]) -> str:
        key = match[1] or match[2]
        if key.lower() in HOST_WORDS and addresses:
            return str(addresses[0])
        value = values.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return quote(str(value), safe="")  # "A & B/.." is no query or path of its own
        return match[0]

    url = _PLACEHOLDER.sub(fill, template)
    return url if not _PLACEHOLDER.search(url) else None


def host_filled(urls: list[str], description: str, task: str) -> str | None:
    """The IPv4 address of `task` that a host placeholder of a URL template (the task's
    first URL, else the one `description` shows) takes, which no other parameter may
    take: "where {ip} is the IP address '192.168.1.1'"."""
    template = next(iter(urls), None) or next(iter(_URL.findall(description)), None)
    if template is None:
        return None
    hosts = [m[1] or m[2] for m in _PLACEHOLDER.finditer(template)]
    if not any(host.lower() in HOST_WORDS for host in hosts):
        return None
    return next((found for found in _IP_ADDRESS.findall(task) if _an_address(found)), None)


def _an_address(text: str) -> bool:
    """Whether `text` is an IPv4 address ("10.0.0.7"; not "999.1.1.1")."""
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True
