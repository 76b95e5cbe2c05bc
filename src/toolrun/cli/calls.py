"""`toolrun calls`: one call's state or result, by its id or a unique prefix of it (the
calls that ended are listed by `toolrun history`, those waiting for a decision by
`toolrun approvals list`)."""

from __future__ import annotations

from typing import Annotated

import typer

from toolrun.cli._console import api_client, api_failure, load_settings
from toolrun.cli._ids import by_id
from toolrun.cli._result_view import show_result
from toolrun.client import ApiError, ApiUnreachable, Client

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS
MAX_LISTED = 1000  # the API's most a page: prefixes resolve among the newest calls


@app.command()
def show(
    call_id: Annotated[
        str,
        typer.Argument(
            help="The call's id, or a unique prefix of one among the newest ended calls "
            "and the approval inbox."
        ),
    ],
    wait: Annotated[
        float, typer.Option(min=0, help="Seconds to wait for it to end (0: its state now).")
    ] = 0.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ToolResult as JSON.")] = False,
) -> None:
    """A call's result, or its state while it has not ended (exit 0 success, 1 another
    ending, 3 not ended yet)."""
    try:
        with api_client(load_settings()) as client:
            result = by_id(
                call_id,
                lambda whole: client.get_call(whole, wait=wait),
                lambda: _known_calls(client),
                "calls",
            )
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    show_result(result, as_json=as_json)


def _known_calls(client: Client) -> list[str]:
    """Ids a prefix may stand for: the newest ended calls, then the inbox's (operators)."""
    ids = [row["call_id"] for row in client.history(limit=MAX_LISTED)["rows"]]
    try:
        inbox = client.approvals(None, limit=MAX_LISTED)
    except ApiError as exc:
        if exc.status_code != 403:  # an agent's token: no inbox, its own history only
            raise
        inbox = []
    return ids + [item["call_id"] for item in inbox]
