"""Debian's Prometheus scraping a real platform with the shipped scrape job (an operator
token from a file) and loading the shipped alert rules."""

from __future__ import annotations

import contextlib
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.deploy.prometheus import CONFIG, RULES, as_promql, binary, dashboard_queries
from tests.integration.platform import STOP_GRACE_S, Platform, free_port, wait_for
from tests.integration.test_api_calls import submit
from toolrun.embedded import terminate
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role

READY_S = 60.0
SCRAPED_S = 60.0


def scrape_config(platform: Platform, token: Path) -> dict[str, Any]:
    """The shipped config, scraping this platform every second with `token`."""
    config: dict[str, Any] = yaml.safe_load(CONFIG.read_text())
    config["global"].update(scrape_interval="1s", evaluation_interval="1s")
    config["rule_files"] = [str(RULES)]
    (job,) = config["scrape_configs"]
    job["authorization"]["credentials_file"] = str(token)
    job["static_configs"] = [{"targets": [f"127.0.0.1:{platform.api_port}"]}]
    return config


@contextlib.contextmanager
def prometheus(config: dict[str, Any], root: Path) -> Iterator[httpx.Client]:
    """Debian's prometheus on a free loopback port, its storage in `root`; a client for
    its HTTP API. Stopped on the way out."""
    (root / "prometheus.yml").write_text(yaml.safe_dump(config))
    port = free_port()
    log = root / "prometheus.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                binary("prometheus"),
                f"--config.file={root / 'prometheus.yml'}",
                f"--storage.tsdb.path={root / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}", timeout=10, trust_env=False
        ) as client:
            wait_for(
                lambda: client.get("/-/ready").status_code == 200,
                READY_S,
                f"prometheus to start ({log.read_text(errors='replace')[-800:]})",
            )
            yield client
    finally:
        terminate([process], STOP_GRACE_S)


def query(client: httpx.Client, promql: str) -> list[dict[str, Any]]:
    """The instant vector `promql` gives now (an error fails)."""
    answer = client.get("/api/v1/query", params={"query": promql}).json()
    assert answer["status"] == "success", answer
    result: list[dict[str, Any]] = answer["data"]["result"]
    return result


def test_prometheus_scrapes_the_platform_and_loads_the_alerts(
    platform: Platform, api: httpx.Client, tmp_path: Path
) -> None:
    token = tmp_path / "toolrun-token"
    token.write_text(
        platform.agent(
            f"prometheus-{uuid.uuid4().hex[:8]}", PermissionLevel.READ_ONLY, Role.OPERATOR
        )
    )
    token.chmod(0o600)

    with prometheus(scrape_config(platform, token), tmp_path) as client:
        for _ in range(3):
            assert submit(api, "read", file_path="hello.txt").json()["status"] == "success"

        def scraped(promql: str) -> bool:
            return bool(query(client, promql))

        for promql in (
            'up{job="toolrun"} == 1',
            'toolrun_calls_total{job="toolrun", tool="read", status="success"} >= 3',
            'toolrun_workers{level="read_only"} > 0',
            'toolrun_queue_wait_seconds_count{level="read_only"} >= 3',
            "toolrun_approvals_pending",
            "toolrun_approvals_oldest_pending_seconds",
        ):
            wait_for(lambda q=promql: scraped(q), SCRAPED_S, f"{promql} in prometheus")

        shipped = {
            rule["alert"]
            for group in yaml.safe_load(RULES.read_text())["groups"]
            for rule in group["rules"]
        }

        def loaded() -> dict[str, str]:
            groups = client.get("/api/v1/rules").json()["data"]["groups"]
            return {rule["name"]: rule["health"] for group in groups for rule in group["rules"]}

        # Every rule evaluated without an error (health "unknown" until its first run).
        wait_for(lambda: loaded() == dict.fromkeys(shipped, "ok"), SCRAPED_S, "the rules to run")
        for promql in dashboard_queries():
            query(client, as_promql(promql))
