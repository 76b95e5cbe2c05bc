"""`toolrun approvals`: review calls waiting for approval, approve or deny, standing rules."""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.prompt import Prompt
from rich.table import Table

from toolrun.cli._console import api_client, api_failure, err, load_settings, out
from toolrun.client import ApiError, ApiUnreachable, Client

app = typer.Typer()  # help line: toolrun.cli.GROUPS
rules_app = typer.Typer(help="Standing rules: calls that run without asking.")
app.add_typer(rules_app, name="rules")
Api = Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")]
Reason = Annotated[str | None, typer.Option(help="Shown to the caller.")]
POLL_S = 1.0


def _client(api: str | None) -> Client:
    return api_client(load_settings(), api)


@app.callback(invoke_without_command=True)
def review(
    ctx: typer.Context,
    api: Api = None,
    once: Annotated[
        bool, typer.Option(help="Review what is pending now, then exit (no live wait).")
    ] = False,
) -> None:
    """Live review: each pending call is shown with its risk; answer approve, deny or skip."""
    if ctx.invoked_subcommand is not None:
        return
    seen: set[str] = set()
    try:
        with _client(api) as client:
            if not once:
                err.print("waiting for calls to approve; Ctrl-C stops")
            while True:
                for item in reversed(client.approvals("pending")):  # oldest first
                    if item["call_id"] not in seen:
                        seen.add(item["call_id"])
                        _ask(client, item)
                if once:
                    return
                time.sleep(POLL_S)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    except KeyboardInterrupt:
        raise typer.Exit(0) from None


def shown(value: object) -> str:
    """`value` as inert text: no markup, control characters (terminal escapes) spelled out.

    Agents choose these strings; an operator must see exactly what would run.
    """
    return escape(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value)))


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _ask(client: Client, item: dict[str, Any]) -> None:
    out.print(
        f"\n[bold]{shown(item['tool_name'])}[/] {shown(item['tool_version'])} "
        f"from {shown(item['agent_name'])} — risk [bold]{shown(item['risk'])}[/], "
        f"policy {shown(item['policy'])} (call {shown(item['call_id'])})",
        highlight=False,
    )
    out.print(shown(item["warning"]), highlight=False)
    out.print_json(data=item["arguments"])
    answer = Prompt.ask("approve, deny or skip?", choices=["a", "d", "s"], default="s")
    if answer == "s":
        return
    reason = Prompt.ask("reason (optional)", default="") or None
    try:
        if answer == "a":
            result = client.approve(item["call_id"], reason)
        else:
            result = client.deny(item["call_id"], reason)
    except ApiError as exc:  # decided elsewhere meanwhile, say: go on with the others
        err.print(f"[red]{exc.status_code}:[/] {escape(exc.detail)}")
        return
    err.print(f"{result.call_id}: {result.status}", highlight=False)


@app.command("list")
def list_pending(
    api: Api = None,
    status: Annotated[
        str, typer.Option(help="pending, approved, denied, expired or all.")
    ] = "pending",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Calls in the inbox, newest first."""
    try:
        with _client(api) as client:
            items = client.approvals(None if status == "all" else status)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        sys.stdout.write(json.dumps(items, indent=2) + "\n")
        return
    table = Table("call", "agent", "tool", "risk", "policy", "status", "warning")
    for item in items:
        keys = ("call_id", "agent_name", "tool_name", "risk", "policy", "status", "warning")
        table.add_row(*(shown(item[key]) for key in keys))
    out.print(table)


@app.command()
def approve(call_id: str, api: Api = None, reason: Reason = None) -> None:
    """Run one parked call."""
    _decide(api, call_id, approved=True, reason=reason)


@app.command()
def deny(call_id: str, api: Api = None, reason: Reason = None) -> None:
    """End one parked call as denied."""
    _decide(api, call_id, approved=False, reason=reason)


def _decide(api: str | None, call_id: str, *, approved: bool, reason: str | None) -> None:
    try:
        with _client(api) as client:
            decide = client.approve if approved else client.deny
            result = decide(call_id, reason)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    err.print(f"{result.call_id}: {result.status}", highlight=False)


@rules_app.command("list")
def list_rules(api: Api = None) -> None:
    """Standing rules, oldest first."""
    try:
        with _client(api) as client:
            rules = client.approval_rules()
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    table = Table("id", "tool", "agent", "command", "arguments", "by")
    for rule in rules:
        table.add_row(
            rule["id"],
            escape(rule["tool_name"]),
            escape(rule["agent_name"] or "(any)"),
            escape(rule["command"] or ""),
            escape(json.dumps(rule["arguments"]) if rule["arguments"] else ""),
            escape(rule["created_by"]),
        )
    out.print(table)


@rules_app.command("add")
def add_rule(
    tool: Annotated[str, typer.Option(help="Tool name.")],
    api: Api = None,
    agent: Annotated[str | None, typer.Option(help="Only this agent (default: any).")] = None,
    command: Annotated[
        str | None, typer.Option(help='A command prefix, matched on parsed words: "git status".')
    ] = None,
) -> None:
    """Let matching calls run without asking."""
    try:
        with _client(api) as client:
            rule = client.add_approval_rule(tool, agent_name=agent, command=command)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    sys.stdout.write(rule["id"] + "\n")


@rules_app.command("remove")
def remove_rule(rule_id: str, api: Api = None) -> None:
    try:
        with _client(api) as client:
            client.remove_approval_rule(rule_id)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
