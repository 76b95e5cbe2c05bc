"""`toolrun calls`: one call's state or result, by its id (the calls that ended are
listed by `toolrun history`, those waiting for a decision by `toolrun approvals list`)."""

from __future__ import annotations

from typing import Annotated

import typer

from toolrun.cli._console import api_client, api_failure, load_settings
from toolrun.cli._result_view import show_result
from toolrun.client import ApiError, ApiUnreachable

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS


@app.command()
def show(
    call_id: Annotated[str, typer.Argument(help="The call's id.")],
    wait: Annotated[
        float, typer.Option(min=0, help="Seconds to wait for it to end (0: its state now).")
    ] = 0.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ToolResult as JSON.")] = False,
) -> None:
    """A call's result, or its state while it has not ended (exit 0 success, 1 another
    ending, 3 not ended yet)."""
    try:
        with api_client(load_settings()) as client:
            result = client.get_call(call_id, wait=wait)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    show_result(result, as_json=as_json)
