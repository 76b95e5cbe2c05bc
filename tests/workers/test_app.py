"""The Celery app's settings: the reliability ones are not optional."""

from __future__ import annotations

import pytest

from toolrun.config import Settings
from toolrun.permissions.levels import PermissionLevel
from toolrun.workers.app import MIN_VISIBILITY_TIMEOUT_S, create_celery_app
from toolrun.workers.dispatch import HARD_LIMIT_MARGIN_S, time_limits

SETTINGS = Settings(redis_url="redis://127.0.0.1:1/0")


def test_queues_come_from_the_permission_levels_each_with_its_own_exchange() -> None:
    app = create_celery_app(SETTINGS)

    bindings = {q.name: (q.exchange.name, q.routing_key) for q in app.conf.task_queues}

    assert bindings == {
        "tools.read_only": ("tools.read_only", "tools.read_only"),
        "tools.read_write": ("tools.read_write", "tools.read_write"),
        "tools.execute": ("tools.execute", "tools.execute"),
        "tools.admin": ("tools.admin", "tools.admin"),
    }
    assert [level.queue_name for level in PermissionLevel] == list(bindings)


def test_reliability_settings() -> None:
    conf = create_celery_app(SETTINGS).conf

    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.task_create_missing_queues is False
    assert conf.worker_cancel_long_running_tasks_on_connection_loss is True
    assert conf.worker_send_task_events is True
    assert conf.task_send_sent_event is True


@pytest.mark.parametrize("longest", [10.0, 600.0, 5000.0])
def test_visibility_timeout_exceeds_the_longest_hard_limit(longest: float) -> None:
    conf = create_celery_app(SETTINGS, longest_time_limit_s=longest).conf

    visibility = conf.broker_transport_options["visibility_timeout"]

    assert visibility >= MIN_VISIBILITY_TIMEOUT_S
    assert visibility > time_limits(longest)[1]
    assert visibility > longest + HARD_LIMIT_MARGIN_S


@pytest.mark.parametrize("tool_limit", [0.5, 1.0, 10.0, 599.5])
def test_tool_limit_below_soft_below_hard(tool_limit: float) -> None:
    soft, hard = time_limits(tool_limit)

    assert tool_limit < soft < hard
    assert isinstance(soft, int)
    assert isinstance(hard, int)


def test_an_app_needs_a_broker_url() -> None:
    with pytest.raises(ValueError, match="TOOLRUN_REDIS_URL is not set"):
        create_celery_app(Settings(redis_url=None))
