"""`toolrun plugins`: register and remove WebAssembly plugins (an admin's token)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from toolrun.cli._console import api_client, api_failure, load_api_settings, out, usage_error
from toolrun.client import ApiError, ApiUnreachable

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS
Api = Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")]


@app.command()
def register(
    module: Annotated[Path, typer.Argument(metavar="FILE.wasm", help="The WASI command module.")],
    descriptor: Annotated[Path, typer.Option(help="The plugin's descriptor, JSON.")],
    api: Api = None,
) -> None:
    """Register a plugin version; every worker can run it at once."""
    try:
        wasm = module.read_bytes()
        described = json.loads(descriptor.read_text(encoding="utf-8"))
    except OSError as exc:
        raise usage_error(f"cannot read {exc.filename}: {exc.strerror}") from exc
    except ValueError as exc:
        raise usage_error(f"{descriptor} is not valid JSON: {exc}") from exc
    try:
        with api_client(load_api_settings(), api) as client:
            registered = client.register_plugin(wasm, described)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    tool = registered["tool"]
    out.print(
        f"registered {escape(tool['name'])}@{escape(tool['version'])} "
        f"(module {registered['digest'][:12]}, workspace {registered['workspace']})",
        highlight=False,
    )


@app.command()
def remove(
    tool: Annotated[str, typer.Argument(metavar="NAME[@VERSION]", help="Default: every version.")],
    api: Api = None,
) -> None:
    """Unregister a plugin version, or all its versions."""
    name, _, version = tool.partition("@")
    try:
        with api_client(load_api_settings(), api) as client:
            removed = client.remove_plugin(name, version or None)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    out.print(f"removed {escape(name)} {', '.join(removed)}", highlight=False)
