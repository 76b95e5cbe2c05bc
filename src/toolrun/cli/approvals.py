"""`toolrun approvals`: review calls waiting for approval, approve or deny, standing rules."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.prompt import Prompt
from rich.table import Table

from toolrun.cli._console import (
    EXIT_TOOL_FAILED,
    api_client,
    api_failure,
    err,
    inert,
    load_api_settings,
    out,
    usage_error,
)
from toolrun.cli._ids import MAX_LISTED, by_id, whole_id
from toolrun.client import ApiError, ApiUnreachable, Client

app = typer.Typer()  # help line: toolrun.cli.GROUPS
rules_app = typer.Typer(help="Standing rules: calls that run without asking.")
app.add_typer(rules_app, name="rules")
Api = Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")]
Reason = Annotated[str | None, typer.Option(help="Shown to the caller.")]
POLL_S = 1.0


def _client(api: str | None) -> Client:
    return api_client(load_api_settings(), api)


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
    return escape(inert(value))


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
            items = client.approvals(None if status == "all" else status, limit=MAX_LISTED)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        sys.stdout.write(json.dumps(items, indent=2) + "\n")
        return
    if not items:
        what = "calls" if status == "all" else f"{status} calls"
        err.print(f"The inbox has no {what}.", highlight=False)
        return
    for item in items:  # a call a line, its whole id (a unique prefix will do), then why
        out.print(
            f"{shown(item['call_id'])}  {shown(item['status']):<9} risk {shown(item['risk']):<6} "
            f"{shown(item['policy']):<9} {shown(item['tool_name'])} from "
            f"[bold]{shown(item['agent_name'])}[/]",
            highlight=False,
            soft_wrap=True,
        )
        out.print(f"    {shown(item['warning'])}", highlight=False, soft_wrap=True)


Ids = Annotated[
    list[str] | None,
    typer.Argument(help="Call ids, or unique prefixes of them among the pending calls."),
]
Every = Annotated[bool, typer.Option("--all", help="Every pending call (see --agent, --tool).")]
OfAgent = Annotated[str | None, typer.Option(help="With --all: only this agent's calls.")]
OfTool = Annotated[str | None, typer.Option(help="With --all: only calls of this tool.")]


def _decider(*, approved: bool, doc: str) -> Callable[..., None]:
    """The `approve` or `deny` command: the same options, one decision."""

    def decide(
        call_ids: Ids = None,
        every: Every = False,
        agent: OfAgent = None,
        tool: OfTool = None,
        api: Api = None,
        reason: Reason = None,
    ) -> None:
        _decide(api, call_ids or [], Chosen(every, agent, tool), approved=approved, reason=reason)

    decide.__doc__ = doc
    return decide


app.command("approve")(
    _decider(
        approved=True,
        doc="Run parked calls: the ones named, or --all pending (of --agent, of --tool).",
    )
)
app.command("deny")(
    _decider(
        approved=False,
        doc="End parked calls as denied: the ones named, or --all pending (of --agent, --tool).",
    )
)


@dataclass(frozen=True)
class Chosen:
    """Which pending calls `--all` decides."""

    every: bool
    agent: str | None
    tool: str | None

    def pick(self, pending: list[dict[str, Any]]) -> list[str]:
        return [
            item["call_id"]
            for item in reversed(pending)  # oldest first
            if self.agent in (None, item["agent_name"]) and self.tool in (None, item["tool_name"])
        ]


def _decide(
    api: str | None, call_ids: list[str], chosen: Chosen, *, approved: bool, reason: str | None
) -> None:
    if chosen.every == bool(call_ids):
        raise usage_error("name the calls to decide, or give --all (not both)")
    if not chosen.every and (chosen.agent or chosen.tool):
        raise usage_error("--agent and --tool choose among --all")
    failed = False
    try:
        with _client(api) as client:
            pending = client.approvals("pending", limit=MAX_LISTED)
            chosen_ids = chosen.pick(pending) if chosen.every else _resolved(call_ids, pending)
            if not chosen_ids:
                err.print("No pending call matches.", highlight=False)
            decide = client.approve if approved else client.deny
            for call_id in chosen_ids:
                try:
                    result = decide(call_id, reason)
                except ApiError as exc:  # decided elsewhere meanwhile: go on with the others
                    err.print(f"[red]{call_id}: {escape(exc.detail)}[/]", highlight=False)
                    failed = True
                    continue
                err.print(f"{result.call_id}: {result.status}", highlight=False)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if failed:
        raise typer.Exit(EXIT_TOOL_FAILED)


def _resolved(call_ids: list[str], pending: list[dict[str, Any]]) -> list[str]:
    """Each of `call_ids` as a whole id: itself, or the one pending call it begins (one
    that begins none is passed on: the API says why, decided or unknown)."""
    known = [item["call_id"] for item in pending]
    return [whole_id(wanted, known, "pending calls") for wanted in call_ids]


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
def remove_rule(
    rule_id: Annotated[
        str, typer.Argument(help="The rule's id, or a unique prefix of one (rules list).")
    ],
    api: Api = None,
) -> None:
    """Remove a standing rule: matching calls ask again."""
    try:
        with _client(api) as client:
            by_id(
                rule_id,
                client.remove_approval_rule,
                lambda: [rule["id"] for rule in client.approval_rules()],
                "rules",
            )
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
