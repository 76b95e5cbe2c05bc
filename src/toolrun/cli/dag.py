"""`toolrun dag`: run DAG plans on the platform and watch them; check and draw plans
locally."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from toolrun.cli._console import (
    EXIT_TOOL_FAILED,
    EXIT_USAGE,
    api_client,
    api_failure,
    err,
    load_api_settings,
    load_settings,
    out,
    platform_registry,
    usage_error,
)
from toolrun.cli._dag_view import View, render_run, runs_table, watch
from toolrun.cli._ids import by_id
from toolrun.cli._result_view import show_result
from toolrun.client import ApiError, ApiUnreachable, Client
from toolrun.dag import Plan, PlanError, load_plan, mermaid, plan_problems
from toolrun.dag.run import RunStatus

app = typer.Typer(no_args_is_help=True)  # help line: toolrun.cli.GROUPS
PlanFile = Annotated[
    Path, typer.Argument(metavar="PLAN_FILE", help="The plan: YAML, or JSON when named *.json.")
]
Api = Annotated[str | None, typer.Option(help="API base URL (default: TOOLRUN_API).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print the run's view as JSON.")]
RunId = Annotated[
    str, typer.Argument(help="The run's id, or a unique prefix of one among the newest runs.")
]
MAX_LISTED = 500  # the API's most: prefixes resolve among the newest runs
POLL_S = 0.25
EXIT_INTERRUPTED = 130  # as a shell reports a process ended by SIGINT


@app.command()
def run(
    plan_file: PlanFile,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the run until it ends (exit 0 if it succeeds).")
    ] = False,
    as_json: AsJson = False,
    run_id: Annotated[
        str | None, typer.Option("--id", help="The run's id (default: the API picks one).")
    ] = None,
    api: Api = None,
) -> None:
    """Start a run: print its id, or follow it (exit 0 succeeded, 1 failed, 2 invalid)."""
    plan = _plan(plan_file, invalid_exit=EXIT_USAGE)
    try:
        with api_client(load_api_settings(), api) as client:
            view: View = _submitted(client, plan, run_id, source=str(plan_file))
            if wait:
                view = _follow(client, view["id"], as_json=as_json)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        _print_json(view)
    elif not wait:
        sys.stdout.write(f"{view['id']}\n")
        err.print(f"follow it: toolrun dag status {escape(view['id'])} --watch", highlight=False)
    else:
        err.print(f"a node's output: toolrun dag output {escape(view['id'])} NODE", highlight=False)
    _exit_for(view)


@app.command()
def status(
    run_id: RunId,
    as_json: AsJson = False,
    follow: Annotated[
        bool, typer.Option("--watch", help="Follow the run until it ends (exit 0 if it succeeds).")
    ] = False,
    api: Api = None,
) -> None:
    """A run's status and its nodes: state, attempts, time taken, error."""
    try:
        with api_client(load_api_settings(), api) as client:
            view = by_id(
                run_id,
                lambda whole: (
                    _follow(client, whole, as_json=as_json) if follow else client.get_dag(whole)
                ),
                lambda: _known_runs(client),
                "runs",
            )
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        _print_json(view)
    elif not follow:
        out.print(render_run(view))
    if follow:
        _exit_for(view)


@app.command("list")
def list_runs(
    status: Annotated[RunStatus | None, typer.Option(help="Only runs in this status.")] = None,
    limit: Annotated[int, typer.Option(min=1, help="Most runs.")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
    api: Api = None,
) -> None:
    """Runs, newest first, with how many nodes are in each state."""
    try:
        with api_client(load_api_settings(), api) as client:
            runs = client.list_dags(status=None if status is None else status.value, limit=limit)
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    if as_json:
        _print_json(runs)
    else:
        out.print(runs_table(runs, time.time()))


@app.command()
def cancel(run_id: RunId, api: Api = None) -> None:
    """Stop a run: nodes not yet started are cancelled, and the run ends `cancelled`."""
    try:
        with api_client(load_api_settings(), api) as client:
            view = by_id(run_id, client.cancel_dag, lambda: _known_runs(client), "runs")
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    shown = escape(str(view["id"]))
    if view["status"] == RunStatus.RUNNING:
        err.print(
            f"cancel requested; see it end: toolrun dag status {shown} --watch", highlight=False
        )
    else:
        err.print(f"run {shown} is {escape(str(view['status']))}", highlight=False)


@app.command()
def validate(plan_file: PlanFile) -> None:
    """Check a plan against the tools the platform runs — built-in, module tools and the
    plugins and MCP tools registered in its database — with no platform running (exit 1:
    invalid)."""
    plan = _plan(plan_file, invalid_exit=EXIT_TOOL_FAILED)
    problems = plan_problems(plan, platform_registry(load_settings()))
    if problems:
        raise _invalid(str(plan_file), problems, EXIT_TOOL_FAILED)
    count = len(plan.nodes)
    sys.stdout.write(f"valid: {count} node{'' if count == 1 else 's'}\n")


@app.command()
def graph(plan_file: PlanFile) -> None:
    """Print the plan as a Mermaid flowchart (dotted arrows: order only, no data): paste it
    into a Markdown file between ```mermaid fences (GitHub and GitLab draw it) or into
    https://mermaid.live."""
    sys.stdout.write(mermaid(_plan(plan_file, invalid_exit=EXIT_TOOL_FAILED)))
    if sys.stdout.isatty():
        err.print(
            "(Mermaid: view it in a ```mermaid block of a Markdown file, or at "
            "https://mermaid.live)",
            highlight=False,
        )


@app.command()
def output(
    run_id: RunId,
    node: Annotated[str, typer.Argument(help="The node's id in the plan.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the ToolResult as JSON.")] = False,
    api: Api = None,
) -> None:
    """A node's result: its call's output or error (exit 0 success, 1 another ending, 3
    not ended yet)."""
    try:
        with api_client(load_api_settings(), api) as client:
            view = _run(client, run_id)
            found = {entry["id"]: entry for entry in view["nodes"]}
            entry = found.get(node)
            if entry is None:
                known = ", ".join(found) or "(none)"
                raise usage_error(f"run {view['id']} has no node {node!r}; its nodes: {known}")
            if not entry.get("call_id"):
                raise usage_error(f"node {node!r} has made no call: it is {entry['state']}")
            result = client.get_call(entry["call_id"])
    except (ApiError, ApiUnreachable) as exc:
        raise api_failure(exc) from exc
    show_result(result, as_json=as_json)


def _run(client: Client, run_id: str) -> View:
    """The run `run_id` names: its whole id or a unique prefix of one."""
    return by_id(run_id, client.get_dag, lambda: _known_runs(client), "runs")


def _known_runs(client: Client) -> list[str]:
    return [run["id"] for run in client.list_dags(limit=MAX_LISTED)]


def _plan(path: Path, *, invalid_exit: int) -> Plan:
    """The plan in `path`; an unreadable file is a usage error, an invalid plan exits
    `invalid_exit` after listing every problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise usage_error(f"cannot read {path}: not UTF-8 text") from None
    except OSError as exc:
        raise usage_error(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return load_plan(text, name=str(path))
    except PlanError as exc:
        raise _invalid(str(path), exc.problems, invalid_exit) from None


def _invalid(source: str, problems: list[str], code: int) -> typer.Exit:
    err.print(f"[red]invalid plan[/] {escape(source)}:", highlight=False)
    for problem in problems:
        err.print(f"  - {escape(problem)}", highlight=False)
    return typer.Exit(code)


def _submitted(client: Client, plan: Plan, run_id: str | None, *, source: str) -> View:
    """The new run's view; a plan the platform refuses (422) or a taken id (409) is a
    usage error."""
    try:
        return client.submit_plan(plan, run_id=run_id)
    except ApiError as exc:
        if exc.status_code == 422 and exc.problems:
            raise _invalid(source, exc.problems, EXIT_USAGE) from None
        if exc.status_code in (409, 422):
            raise usage_error(exc.detail) from None
        raise


def _follow(client: Client, run_id: str, *, as_json: bool) -> View:
    """The run's view once it ends, drawn live on the way unless `as_json`; Ctrl-C stops
    following (the run goes on)."""
    try:
        if as_json:
            return client.wait_dag(run_id, poll_s=POLL_S)
        return watch(lambda: client.get_dag(run_id), out, poll_s=POLL_S)
    except KeyboardInterrupt:
        shown = escape(run_id)
        err.print(
            f"stopped watching; run {shown} goes on. Follow it: toolrun dag status {shown} "
            f"--watch; stop it: toolrun dag cancel {shown}",
            highlight=False,
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None


def _exit_for(view: View) -> None:
    """Exit 1 when the run ended failed or cancelled."""
    if view["status"] in (RunStatus.FAILED, RunStatus.CANCELLED):
        raise typer.Exit(EXIT_TOOL_FAILED)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")
