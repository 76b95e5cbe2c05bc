"""schemathesis against the live API's /openapi.json: no generated request gets a 5xx."""

from __future__ import annotations

import hypothesis
import schemathesis
from schemathesis.checks import not_a_server_error

from tests.integration.platform import Platform
from toolrun.permissions.levels import PermissionLevel
from toolrun.permissions.roles import Role

ADMIN = PermissionLevel.ADMIN

EXAMPLES_PER_OPERATION = 60


def test_no_generated_request_gets_a_server_error(platform: Platform) -> None:
    schema = schemathesis.openapi.from_url(f"{platform.base_url}/openapi.json")
    # Past authentication: an admin reaches every route's own validation.
    headers = {"Authorization": f"Bearer {platform.agent('fuzzer', ADMIN, Role.ADMIN)}"}
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.label for op in operations} >= {"POST /v1/calls", "GET /v1/calls/{call_id}"}
    statuses: list[int] = []
    for operation in operations:

        @hypothesis.given(case=operation.as_strategy())
        @hypothesis.settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            suppress_health_check=list(hypothesis.HealthCheck),
            database=None,
        )
        def no_server_error(case: schemathesis.Case) -> None:
            if case.query and _is_number(case.query.get("wait")):
                case.query["wait"] = min(float(case.query["wait"]), 0.5)  # keep the run short
            response = case.call_and_validate(headers=headers, checks=[not_a_server_error])
            statuses.append(response.status_code)

        no_server_error()
    assert len(statuses) >= 10 * len(operations)  # the fuzzer really sent requests
    assert any(400 <= code < 500 for code in statuses)  # and bad ones among them


def _is_number(value: object) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return True
