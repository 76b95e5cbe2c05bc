"""Ids as typed on the command line: a whole id, or a unique prefix of one among the ids
the API lists (calls, runs, rules)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from toolrun.cli._console import usage_error
from toolrun.client import ApiError, Client

T = TypeVar("T")
MAX_LISTED = 1000  # the API's most a page: prefixes resolve among the newest (and --all)
_NO_LISTING = (404, 405)  # an API older than GET /v1/calls


def whole_id(wanted: str, known: Iterable[str], what: str) -> str:
    """`wanted` itself when it is one of `known` or begins none of them (the API then says
    why it is unknown), else the one id of `known` it begins.

    Raises:
        typer.Exit: `wanted` begins several of `known` (a usage error naming them).
    """
    ids = list(dict.fromkeys(known))  # an id listed twice is one match
    if wanted in ids:
        return wanted
    matches = [each for each in ids if each.startswith(wanted)]
    if len(matches) > 1:
        raise usage_error(f"{wanted!r} begins {len(matches)} {what}: {', '.join(matches)}")
    return matches[0] if matches else wanted


def by_id(
    wanted: str, fetch: Callable[[str], T], known: Callable[[], Iterable[str]], what: str
) -> T:
    """`fetch(wanted)`; when the API knows no such id (404), `fetch` of the one id among
    `known()` that `wanted` begins. A whole id costs one request, as before prefixes.

    Raises:
        ApiError: the API's refusal, the first 404 when `wanted` begins no known id.
        typer.Exit: `wanted` begins several known ids.
    """
    try:
        return fetch(wanted)
    except ApiError as exc:
        if exc.status_code != 404:
            raise
        unknown = exc
    whole = whole_id(wanted, known(), what)
    if whole == wanted:
        raise unknown
    return fetch(whole)


def known_calls(client: Client) -> list[str]:
    """Call ids a prefix may stand for: the calls not ended, the newest ended calls, then
    the inbox's (operators)."""
    try:
        open_ = [call["call_id"] for call in client.calls(limit=MAX_LISTED)]
    except ApiError as exc:
        if exc.status_code not in _NO_LISTING:
            raise
        open_ = []
    ids = [row["call_id"] for row in client.history(limit=MAX_LISTED)["rows"]]
    try:
        inbox = client.approvals(None, limit=MAX_LISTED)
    except ApiError as exc:
        if exc.status_code != 403:  # an agent's token: no inbox, its own history only
            raise
        inbox = []
    return open_ + ids + [item["call_id"] for item in inbox]
