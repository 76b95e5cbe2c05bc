"""deploy/prometheus, deploy/grafana and their compose and Kubernetes wiring: promtool
accepts them, and every query reads series toolrun's /metrics serves."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.prometheus import (
    CONFIG,
    DASHBOARD,
    ROOT,
    RULES,
    as_promql,
    binary,
    dashboard_queries,
    exported,
    reads,
)

CREDENTIALS = "/etc/prometheus/secrets/toolrun-token"
PROMETHEUS_SERVICE = ROOT / "deploy" / "prometheus" / "compose.yaml"
K8S = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "prometheus.yaml").read_text()))
# Series of other exporters a rule may read: Prometheus's own, kube-state-metrics'.
FOREIGN = {"up": {"job", "instance"}, "kube_pod_container_status_restarts_total": {"pod"}}


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary("promtool"), *args], capture_output=True, text=True, timeout=60, check=False
    )


def rules() -> list[dict[str, Any]]:
    return [
        rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]
    ]


def k8s(kind: str, name: str) -> dict[str, Any]:
    (found,) = [doc for doc in K8S if doc["kind"] == kind and doc["metadata"]["name"] == name]
    document: dict[str, Any] = found
    return document


def test_promtool_accepts_the_rules() -> None:
    checked = promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules())} rules found" in checked.stdout


def test_promtool_accepts_the_config(tmp_path: Path) -> None:
    # promtool opens the token file: the shipped path, moved to one that exists here.
    token = tmp_path / "toolrun-token"
    token.write_text("an operator token\n")
    shipped = CONFIG.read_text()
    assert shipped.count(CREDENTIALS) == 1
    (tmp_path / "prometheus.yml").write_text(shipped.replace(CREDENTIALS, str(token)))
    (tmp_path / "alerts.yml").write_text(RULES.read_text())

    checked = promtool("check", "config", str(tmp_path / "prometheus.yml"))

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1 rule files found" in checked.stdout


def test_promtool_parses_every_dashboard_query(tmp_path: Path) -> None:
    recording = [
        {"record": f"dashboard:query_{n}", "expr": as_promql(query)}
        for n, query in enumerate(dashboard_queries())
    ]
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": recording}]}))

    checked = promtool("check", "rules", str(path))

    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_dashboard_query_reads_series_toolrun_serves() -> None:
    series = exported()
    for query in dashboard_queries():
        names, labels = reads(as_promql(query))
        assert names, query
        assert names <= set(series), f"{query}: {sorted(names - set(series))}"
        known = set().union(*(series[name] for name in names))
        assert labels <= known, f"{query}: no label {sorted(labels - known)}"


def test_every_rule_reads_series_toolrun_serves() -> None:
    series = {**exported(), **FOREIGN}
    for rule in rules():
        names, labels = reads(rule["expr"])
        assert names, rule["alert"]
        assert names <= set(series), f"{rule['alert']}: {sorted(names - set(series))}"
        known = set().union(*(series[name] for name in names))
        assert labels <= known, f"{rule['alert']}: no label {sorted(labels - known)}"


def test_the_dashboard_shows_what_operators_watch() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    read = set().union(*(reads(as_promql(query))[0] for query in dashboard_queries()))
    assert {
        "toolrun_calls_total",
        "toolrun_call_duration_seconds_bucket",
        "toolrun_queue_depth",
        "toolrun_queue_wait_seconds_bucket",
        "toolrun_approvals_pending",
        "toolrun_approvals_oldest_pending_seconds",
        "toolrun_calls_throttled_total",
        "toolrun_workers",
        "toolrun_workers_lost",
        "toolrun_process_restarts",
    } <= read
    assert len({panel["id"] for panel in dashboard["panels"]}) == len(dashboard["panels"])
    assert all(
        panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        for panel in dashboard["panels"]
    )


@pytest.mark.parametrize(
    "alert",
    [
        "ToolrunQueueGrowing",
        "ToolrunHighFailureRate",
        "ToolrunApprovalsWaiting",
        "ToolrunLevelWithoutWorker",
        "ToolrunWorkerLost",
        "ToolrunProcessRestarting",
    ],
)
def test_the_rules_have_the_alerts_issue_28_asks_for(alert: str) -> None:
    (rule,) = [rule for rule in rules() if rule.get("alert") == alert]
    assert rule["annotations"]["summary"]


def test_kubernetes_runs_the_shipped_config_and_rules() -> None:
    data = k8s("ConfigMap", "toolrun-prometheus")["data"]
    assert data == {"prometheus.yml": CONFIG.read_text(), "alerts.yml": RULES.read_text()}
    spec = k8s("Deployment", "toolrun-prometheus")["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    assert "--config.file=/etc/prometheus/prometheus.yml" in container["args"]
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == "config"]
    (volume,) = [v for v in spec["volumes"] if v["name"] == "config"]
    shown = {
        f"{mount['mountPath']}/{item['path']}"
        for source in volume["projected"]["sources"]
        for item in source.get("secret", {}).get("items", [])
    }
    assert shown == {CREDENTIALS}


def test_the_config_scrapes_the_api_by_the_name_compose_and_kubernetes_give_it() -> None:
    (job,) = yaml.safe_load(CONFIG.read_text())["scrape_configs"]
    assert job["authorization"]["credentials_file"] == CREDENTIALS
    (target,) = [t for static in job["static_configs"] for t in static["targets"]]
    host, port = target.split(":")
    k8s_api = next(
        doc
        for doc in yaml.safe_load_all((ROOT / "deploy" / "k8s" / "toolrun.yaml").read_text())
        if doc["kind"] == "Service" and doc["metadata"]["name"] == host
    )
    assert k8s_api["spec"]["ports"] == [{"port": int(port)}]
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    api = compose["services"]["api"]
    assert host in api["networks"]["default"]["aliases"]
    assert api["command"][-2:] == ["--port", port]


def test_compose_runs_prometheus_in_the_monitoring_profile_with_the_shipped_files() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert "deploy/prometheus/compose.yaml" in compose["include"]
    service = yaml.safe_load(PROMETHEUS_SERVICE.read_text())["services"]["prometheus"]
    assert service["profiles"] == ["monitoring"]
    assert "--config.file=/etc/prometheus/prometheus.yml" in service["command"]
    binds = {
        volume["target"]: (PROMETHEUS_SERVICE.parent / volume["source"]).resolve()
        for volume in service["volumes"]
        if isinstance(volume, dict)
    }
    assert binds["/etc/prometheus/prometheus.yml"] == CONFIG
    assert binds["/etc/prometheus/alerts.yml"] == RULES
    assert CREDENTIALS in binds
