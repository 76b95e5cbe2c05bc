"""The Celery app's settings: the reliability ones are not optional."""

from __future__ import annotations

import pytest

from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.tools.registry import ToolRegistry
from toolrun.workers.app import MIN_VISIBILITY_TIMEOUT_S, create_celery_app, longest_time_limit
from toolrun.workers.dispatch import time_limits

SETTINGS = Settings(redis_url="redis://127.0.0.1:1/0")


def test_queues_are_the_levels_delegation_and_this_machines_each_with_its_own_exchange() -> None:
    app = create_celery_app(SETTINGS.model_copy(update={"machine_id": "m1"}))

    bindings = {q.name: (q.exchange.name, q.routing_key) for q in app.conf.task_queues}

    names = [
        *(level.queue_name for level in PermissionLevel),
        "tools.delegation",
        *(f"{level.queue_name}@m1" for level in PermissionLevel),
    ]
    assert list(bindings) == names
    assert all(bindings[name] == (name, name) for name in names)
    assert names[:4] == ["tools.read_only", "tools.read_write", "tools.execute", "tools.admin"]


def test_reliability_settings() -> None:
    conf = create_celery_app(SETTINGS).conf

    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_create_missing_queues is False
    assert conf.worker_cancel_long_running_tasks_on_connection_loss is True
    assert conf.worker_send_task_events is False  # toolrun sends them: workers.task_events
    assert conf.task_send_sent_event is True


@pytest.mark.parametrize("longest", [10.0, 600.0, 5000.0])
def test_visibility_timeout_exceeds_the_longest_hard_limit(longest: float) -> None:
    conf = create_celery_app(SETTINGS, longest_time_limit_s=longest).conf

    visibility = conf.broker_transport_options["visibility_timeout"]

    assert visibility >= MIN_VISIBILITY_TIMEOUT_S
    assert visibility > time_limits(longest, SETTINGS.kill_grace_s)[1]


@pytest.mark.parametrize("tool_limit", [0.5, 1.0, 10.0, 599.5])
@pytest.mark.parametrize("grace", [0.0, 0.5, 1.0, 5.0])
def test_the_sandbox_cleanup_fits_below_the_soft_limit(tool_limit: float, grace: float) -> None:
    soft, hard = time_limits(tool_limit, grace)

    # timeout, then TERM → grace → KILL, the sweep's grace, and 2 s for the cgroup to empty
    assert tool_limit + 3 * grace + 2 < soft < hard
    assert isinstance(soft, int)
    assert isinstance(hard, int)


def test_an_app_needs_a_broker_url() -> None:
    with pytest.raises(ValueError, match="TOOLRUN_REDIS_URL is not set"):
        create_celery_app(Settings(redis_url=None))


def test_the_longest_limit_includes_bash_operator_maximum() -> None:
    settings = Settings(redis_url="redis://127.0.0.1:1/0", bash_max_timeout_s=7200)

    assert longest_time_limit(ToolRegistry.with_builtins(), settings) == 7200
    visibility = create_celery_app(
        settings, longest_time_limit_s=7200
    ).conf.broker_transport_options
    assert visibility["visibility_timeout"] > 7200
