"""`Settings()` reads the environment: TOOLRUN_<NAME> in any case, OpenTelemetry's own
variables for the OTEL_* settings, list and object settings as JSON, keyword arguments
over the environment, and every setting it read counted as given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from toolrun.config import Settings


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().startswith(("toolrun_", "otel_")):
            monkeypatch.delenv(name)


def test_settings_come_from_toolrun_variables_in_any_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("toolrun_api_port", "9001")
    monkeypatch.setenv("TOOLRUN_Auto_Approve", "true")
    monkeypatch.setenv("TOOLRUN_WORKSPACE", "/srv/project")

    settings = Settings()

    assert settings.api_port == 9001
    assert settings.auto_approve is True
    assert settings.workspace == Path("/srv/project")
    assert {"api_port", "auto_approve", "workspace"} <= settings.model_fields_set
    assert "api_host" not in settings.model_fields_set


def test_list_and_object_settings_are_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRUN_NETWORK_ALLOWLIST", '["pypi.org", "*.github.com"]')
    monkeypatch.setenv("TOOLRUN_TOOL_POLICIES", '{"write": "confirm"}')
    monkeypatch.setenv("TOOLRUN_COMMAND_ALLOWLIST", "null")  # the check turned off
    monkeypatch.setenv("TOOLRUN_MODEL", "[not json, a name]")  # a plain string stays one

    settings = Settings()

    assert settings.network_allowlist == ["pypi.org", "*.github.com"]
    assert settings.tool_policies == {"write": "confirm"}
    assert settings.command_allowlist is None
    assert settings.model == "[not json, a name]"


def test_otel_settings_come_from_opentelemetry_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("TOOLRUN_OTEL_ENDPOINT", "http://elsewhere:4318")  # not its name

    assert Settings().otel_endpoint == "http://127.0.0.1:4318"
    assert Settings.variable("otel_endpoint") == "OTEL_EXPORTER_OTLP_ENDPOINT"
    assert Settings.variable("api_port") == "TOOLRUN_API_PORT"


def test_keyword_arguments_win_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRUN_API_PORT", "9001")
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")

    settings = Settings(api_port=9002, otel_sdk_disabled=False)

    assert settings.api_port == 9002
    assert settings.otel_sdk_disabled is False


def test_null_unsets_a_setting_that_may_be_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRUN_HISTORY_RETENTION_DAYS", "null")  # configuration.md's way
    monkeypatch.setenv("TOOLRUN_API_PORT", "null")  # a port must be given

    with pytest.raises(ValidationError) as raised:
        Settings()
    assert [e["loc"] for e in raised.value.errors()] == [("api_port",)]
    assert Settings(api_port=8000).history_retention_days is None


def test_a_setting_given_is_not_read_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRUN_NETWORK_ALLOWLIST", "not json")

    assert Settings(network_allowlist=["pypi.org"]).network_allowlist == ["pypi.org"]


def test_every_setting_that_is_not_json_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRUN_NETWORK_ALLOWLIST", "pypi.org")
    monkeypatch.setenv("TOOLRUN_LSP_SERVERS", "{python: pylsp}")

    with pytest.raises(ValidationError) as raised:
        Settings()

    assert [(e["loc"], e["type"]) for e in raised.value.errors()] == [
        (("network_allowlist",), "json_invalid"),
        (("lsp_servers",), "json_invalid"),
    ]


def test_with_no_variable_nothing_counts_as_given() -> None:
    settings = Settings()

    assert settings.model_fields_set == set()
    assert settings.api_port == Settings.model_fields["api_port"].default
