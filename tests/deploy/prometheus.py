"""What the monitoring deploy files' tests share: where the files are, Debian's prometheus
and promtool, the series toolrun's /metrics serves, the series a PromQL expression reads."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from toolrun.monitoring import PlatformCollector, Snapshot
from toolrun.monitoring.snapshot import Durations, Workers

ROOT = Path(__file__).parents[2]
CONFIG = ROOT / "deploy" / "prometheus" / "prometheus.yml"
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "toolrun.json"
# The labels Prometheus adds to every series it scrapes.
TARGET_LABELS = {"job", "instance"}
# Grafana's variables, as a query would be sent for the last hour.
GRAFANA_VARIABLES = {"$__rate_interval": "1m", "$tool": ".*"}

_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
_MATCHERS = re.compile(r"\{[^}]*\}")
_MATCHED = re.compile(r"(\w+)\s*(?:=~|!~|!=|=)")
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_NAME = re.compile(r"\b([A-Za-z_:][\w:]*)\b(\s*\()?")
_KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring"}


def binary(name: str) -> str:
    """Debian's `name` (prometheus, promtool): skipped without it, failing under CI."""
    found = shutil.which(name)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs Debian's prometheus (apt-get install prometheus): no {name}")
        pytest.skip(f"no {name} on this machine (make prometheus installs it)")
    return found


def exported() -> dict[str, set[str]]:
    """Each series name toolrun's /metrics serves, with its labels (and the target's): the
    collector run over a snapshot that holds one of everything."""
    snapshot = Snapshot(
        calls={("read", "success"): 1},
        durations={"read": Durations()},
        queue_depths={"read_only": 0},
        queue_waits={"read_only": Durations()},
        workers={"read_only": Workers()},
        agents_queued={"agent": 0},
        agents_in_flight={"agent": 0},
        throttled={("agent", "rate_per_s"): 1},
    )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(PlatformCollector(snapshot, approvals_pending=0, process_restarts={"api": 0}))
    series: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            series.setdefault(sample.name, set(TARGET_LABELS)).update(sample.labels)
    return series


def dashboard_queries() -> list[str]:
    """Every PromQL expression of the dashboard: its panels' and its variables'."""
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text())
    queries = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            found = re.fullmatch(r"label_values\((\w+), (\w+)\)", variable["definition"])
            assert found, variable["definition"]
            queries.append(f"group by ({found[2]}) ({found[1]})")
    return queries


def as_promql(query: str) -> str:
    """A dashboard query with Grafana's variables replaced, as Grafana sends it."""
    for variable, value in GRAFANA_VARIABLES.items():
        query = query.replace(variable, value)
    return query


def reads(expression: str) -> tuple[set[str], set[str]]:
    """The series names `expression` reads, and the labels it groups or matches by."""
    unquoted = _STRING.sub('""', expression)
    matched = {
        label for matchers in _MATCHERS.findall(unquoted) for label in _MATCHED.findall(matchers)
    }
    bare = _RANGE.sub("", _MATCHERS.sub("", unquoted))
    grouped = {label.strip() for found in _GROUPING.findall(bare) for label in found.split(",")}
    labels = (matched | grouped) - {""}
    bare = _GROUPING.sub("", bare)
    names = {
        match[1]
        for match in _NAME.finditer(bare)
        if not match[2] and match[1] not in _KEYWORDS and not match[1][0].isdigit()
    }
    return names, labels
