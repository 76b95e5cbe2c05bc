"""`toolrun select`, `feedback`, `blacklist`, `whitelist`: tool selection from the CLI.

The selection pipeline is imported by `select --local`, the only command that runs it
here (`toolrun --help` imports this module)."""

# ruff: noqa: PLC0415 - see the module docstring

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from toolrun.cli._console import (
    api_client,
    api_failure,
    duration_s,
    load_api_settings,
    load_registry,
    load_settings,
    out,
    usage_error,
)
from toolrun.cli._ids import by_id, known_calls, whole_id
from toolrun.client import ApiError, ApiUnreachable, Client

Api = Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")]
blacklist_app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS
whitelist_app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS


def _with_client(api: str | None, work: Any) -> Any:
    try:
        with api_client(load_api_settings(), api) as client:
            return work(client)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc


def select(
    task: Annotated[str, typer.Argument(help="What the tool should do, in words.")],
    context: Annotated[
        str | None, typer.Option(help="JSON object of argument values by name.")
    ] = None,
    tools: Annotated[
        Path | None,
        typer.Option(help="A JSON list of tools (OpenAI function or BFCL format) to pick from."),
    ] = None,
    top_k: Annotated[int, typer.Option(min=1, max=50, help="Candidates shown.")] = 5,
    min_confidence: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            max=0.999,
            help="The confidence a tool needs to be chosen (default 0.5; a costly tool "
            "needs more).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole answer.")] = False,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Select in this process, over the local registry or --tools (no platform: "
            "no history, feedback or lists).",
        ),
    ] = False,
    api: Api = None,
) -> None:
    """The tool for a task, its arguments, and why: the five steps' trace."""
    values = _json_object(context, "--context") if context else {}
    supplied = _tool_list(tools) if tools else None
    if local:
        if api is not None:
            raise usage_error("--api does not apply to --local")
        found = _select_here(task, values, supplied, top_k, min_confidence)
    else:
        found = _with_client(
            api,
            lambda c: c.select(
                task, context=values, tools=supplied, top_k=top_k, min_confidence=min_confidence
            ),
        )
    if as_json:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
    else:
        _show(found)
    if found["chosen"] is None:
        raise typer.Exit(1)


def _select_here(
    task: str,
    context: dict[str, Any],
    supplied: list[dict[str, Any]] | None,
    top_k: int,
    min_confidence: float | None,
) -> dict[str, Any]:
    """`POST /v1/select`'s answer, computed in this process (steps 2 and 5 by the
    configured model, as the API does, where one is configured)."""
    from toolrun.selection.cards import CardError, ToolCard
    from toolrun.selection.judge import DEFAULT_CONFIDENCE
    from toolrun.selection.model_steps import ModelSteps
    from toolrun.selection.pipeline import Selector
    from toolrun.selection.semantic import optional_encoder

    settings = load_settings()
    if supplied is None:
        newest = {t.descriptor.name: t.descriptor for t in load_registry(settings).list()}
        cards = [ToolCard.of(descriptor) for descriptor in newest.values()]  # as the API
    else:
        try:
            cards = ToolCard.parse_list(supplied)
        except CardError as exc:
            raise usage_error(f"--tools: {exc}") from exc
    selector = Selector(cards, optional_encoder(settings.embedding_model))
    selection = selector.select(
        task,
        context=context,
        top_k=top_k,
        model=ModelSteps.configured(settings),
        min_confidence=DEFAULT_CONFIDENCE if min_confidence is None else min_confidence,
    )
    return {**selection.as_dict(), "history": {}}


def _show(found: dict[str, Any]) -> None:
    trace = found["trace"]
    out.print(f"1 scenario    {', '.join(trace['1_scenario']) or '(none recognised)'}")
    out.print(f"2 intents     {', '.join(trace['2_intents']) or '(none recognised)'}")
    # Step 3's ranking, and step 4's confidence that each fits.
    table = Table("candidate", "score", "relevance", "meaning", "confidence", "why")
    for candidate in found["candidates"]:
        similarity, confidence = candidate.get("similarity"), candidate.get("confidence")
        table.add_row(
            escape(candidate["name"]),
            f"{candidate['score']:.3f}",
            f"{candidate['relevance']:.2f}",
            "-" if similarity is None else f"{similarity:.2f}",
            "-" if confidence is None else f"{confidence:.2f}",
            escape(", ".join(candidate["why"])),
        )
    out.print(f"3 matching by {escape(trace['3_matching_by'])}")
    out.print(table)
    out.print(f"4 evaluation  {escape(found['reason'])}")
    if found["chosen"] is not None:
        out.print(f"5 arguments   {escape(json.dumps(found['arguments']))}")
        if found["missing"]:
            out.print(f"  [yellow]missing:[/] {escape(', '.join(found['missing']))}")
        if found.get("guessed"):
            guessed = escape(", ".join(found["guessed"]))
            out.print(f"  [yellow]guessed (check before calling):[/] {guessed}")
        for error in found["errors"]:
            out.print(f"  [red]invalid:[/] {escape(error)}")


def _json_object(text: str, option: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise usage_error(f"{option} is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise usage_error(f"{option} must be a JSON object")
    return value


def _tool_list(path: Path) -> list[dict[str, Any]]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise usage_error(f"cannot read {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise usage_error(f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(value, list) or not value or not all(isinstance(t, dict) for t in value):
        raise usage_error(f"{path} must hold a non-empty JSON list of tool objects")
    return value


def feedback(
    call_id: Annotated[str, typer.Argument(help="The call's id, or a unique prefix of one.")],
    rating: Annotated[int, typer.Option(min=1, max=5, help="1 (useless) to 5 (right).")],
    comment: Annotated[str | None, typer.Option(help="What was good or wrong.")] = None,
    api: Api = None,
) -> None:
    """Rate a call that ended; ratings move the tool up or down in selection."""

    def rate(client: Client) -> str:
        def rated(whole: str) -> str:
            client.feedback(whole, rating, comment)
            return whole

        return by_id(call_id, rated, lambda: known_calls(client), "calls")

    whole = _with_client(api, rate)
    out.print(f"rated {escape(whole)} {rating}/5", highlight=False)


@blacklist_app.command("list")
def list_blacklist(
    as_json: Annotated[bool, typer.Option("--json")] = False, api: Api = None
) -> None:
    """Tools excluded now: set by an operator, or after failing N times in a row."""
    found: list[dict[str, Any]] = _with_client(api, Client.blacklist)
    if as_json:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
        return
    table = Table("tool", "until", "why")
    for entry in found:
        until = entry["until"]
        shown = (
            "lifted by an operator"
            if until is None
            else time.strftime("%H:%M:%S", time.localtime(until))
        )
        table.add_row(escape(entry["tool_name"]), shown, escape(entry["reason"]))
    out.print(table)


@blacklist_app.command("add")
def add_to_blacklist(
    tool: str,
    for_: Annotated[
        float | None,
        typer.Option("--for", parser=duration_s, metavar="DURATION", help="Default: until lifted."),
    ] = None,
    reason: Annotated[str | None, typer.Option()] = None,
    api: Api = None,
) -> None:
    """Keep a tool out of recommendations (operators)."""
    _with_client(api, lambda c: c.add_to_blacklist(tool, for_s=for_, reason=reason))
    out.print(f"blacklisted {escape(tool)}", highlight=False)


@blacklist_app.command("lift")
def lift(tool: str, api: Api = None) -> None:
    """Recommend a blacklisted tool again (operators)."""
    _with_client(api, lambda c: c.lift(tool))
    out.print(f"lifted {escape(tool)}", highlight=False)


@whitelist_app.command("list")
def list_whitelist(
    as_json: Annotated[bool, typer.Option("--json")] = False, api: Api = None
) -> None:
    """Tools ranked first when they match a task."""
    found: list[dict[str, Any]] = _with_client(api, Client.whitelist)
    if as_json:
        sys.stdout.write(json.dumps(found, indent=2) + "\n")
        return
    table = Table("id", "tool", "agent", "by")
    for entry in found:
        table.add_row(
            entry["id"],
            escape(entry["tool_name"]),
            escape(entry["agent_id"] or "(every agent)"),
            escape(entry["created_by"] or ""),
        )
    out.print(table)


@whitelist_app.command("add")
def add_to_whitelist(
    tool: str,
    agent: Annotated[str | None, typer.Option(help="Only for this agent.")] = None,
    api: Api = None,
) -> None:
    """Rank a tool first when it matches (operators)."""
    entry = _with_client(api, lambda c: c.add_to_whitelist(tool, agent_name=agent))
    out.print(f"whitelisted {escape(tool)} (entry {entry['id']})", highlight=False)


@whitelist_app.command("remove")
def remove_from_whitelist(
    entry_id: Annotated[str, typer.Argument(help="The entry's id, or a unique prefix of one.")],
    api: Api = None,
) -> None:
    """Remove a whitelist entry by its id (operators)."""

    def remove(client: Client) -> str:
        known = [str(entry["id"]) for entry in client.whitelist()]
        whole = whole_id(entry_id, known, "entries")
        client.remove_from_whitelist(whole)
        return whole

    out.print(f"removed {escape(_with_client(api, remove))}", highlight=False)
