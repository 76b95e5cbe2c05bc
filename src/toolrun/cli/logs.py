"""`toolrun logs`: the output of the platform's processes, which `toolrun up` writes to
files in its home (one a process), shown here — the last lines, or followed as they come."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from toolrun.cli._console import load_api_settings, out, usage_error

_TAIL_BYTES = 256 * 1024  # enough for the last lines of any log; never the whole file
_POLL_S = 0.3


def logs(
    names: Annotated[
        list[str] | None,
        typer.Argument(help="Processes: api, scheduler, redis, worker-read_only… (default all)."),
    ] = None,
    lines: Annotated[int, typer.Option("--lines", "-n", min=0, help="Last lines of each.")] = 20,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing what they write (Ctrl-C ends).")
    ] = False,
) -> None:
    """The last lines of the platform's process logs (`toolrun up` keeps one a process in
    its home), each line prefixed with its process."""
    from toolrun.embedded.supervisor import LOGS  # noqa: PLC0415 - the package loads redis

    folder = load_api_settings().platform_home / LOGS
    files = sorted(folder.glob("*.log"))
    if not files:
        raise usage_error(
            f"no logs in {folder}: `toolrun up` writes them there (`--verbose` keeps them on "
            "its console instead)"
        )
    chosen = _chosen(files, names or [])
    width = max(len(path.stem) for path in chosen)
    offsets = {}
    for path in chosen:
        text, offsets[path] = _tail(path, lines)
        _print(path.stem, width, text)
    if not follow:
        return
    try:
        while True:
            time.sleep(_POLL_S)
            for path in chosen:
                text, offsets[path] = _since(path, offsets[path])
                _print(path.stem, width, text)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


def _chosen(files: list[Path], names: list[str]) -> list[Path]:
    by_name = {path.stem: path for path in files}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise usage_error(f"no log of {', '.join(unknown)}; there are: {', '.join(by_name)}")
    return [by_name[name] for name in names] if names else files


def _tail(path: Path, lines: int) -> tuple[str, int]:
    """The last `lines` lines of `path`, and where it ends."""
    with path.open("rb") as file:
        end = file.seek(0, 2)
        file.seek(max(0, end - _TAIL_BYTES))
        found = file.read().decode("utf-8", "replace").splitlines()
    return "\n".join(found[-lines:] if lines else []), end


def _since(path: Path, offset: int) -> tuple[str, int]:
    """What was written to `path` from `offset` on (whole lines), and where that ends; a
    file made anew (shorter) is read from its start."""
    with path.open("rb") as file:
        end = file.seek(0, 2)
        start = 0 if end < offset else offset
        file.seek(start)
        data = file.read(end - start)
    whole = data[: data.rfind(b"\n") + 1]
    return whole.decode("utf-8", "replace").rstrip("\n"), start + len(whole)


def _print(name: str, width: int, text: str) -> None:
    for line in text.splitlines():
        out.print(f"[dim]{name:<{width}} |[/] {escape(line)}", highlight=False, soft_wrap=True)
