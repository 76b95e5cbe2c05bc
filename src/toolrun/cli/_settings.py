"""The four settings a command that only talks to the API uses — workspace, home, API,
token — read without pydantic and the whole `Settings` model, which would cost such a
command about half its start.

`ApiSettings` reads them as `toolrun.config.Settings` does (TOOLRUN_ names in any case,
the last of two spellings winning, XDG_STATE_HOME for the default home), and
tests/test_cli_startup_settings.py checks that both agree. Everything else — tools, the
sandbox, the database — still comes from `Settings` (`_console.load_settings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, Self

from toolrun import environment
from toolrun.homes import platform_home

DEFAULT_API = "http://127.0.0.1:8000"  # Settings.api's default
_PREFIX = "toolrun_"
_READ = frozenset({"workspace", "home", "api", "token"})


class PlatformSettings(Protocol):
    """What finding the platform and reaching its API need: `Settings` has it, and so has
    `ApiSettings` (the names are pydantic's, for `_locate.locate` to take either)."""

    @property
    def workspace(self) -> Path: ...

    @property
    def api(self) -> str: ...

    @property
    def token(self) -> str | None: ...

    @property
    def platform_home(self) -> Path: ...

    @property
    def admin_token_path(self) -> Path: ...

    @property
    def model_fields_set(self) -> set[str]: ...

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with `update`'s values, counted as given explicitly."""
        ...


@dataclass(frozen=True)
class ApiSettings:
    """TOOLRUN_WORKSPACE, TOOLRUN_HOME, TOOLRUN_API and TOOLRUN_TOKEN; `given` names those
    set (in the environment, or found since: `Settings.model_fields_set`)."""

    workspace: Path
    home: Path | None = None
    api: str = DEFAULT_API
    token: str | None = None
    given: frozenset[str] = frozenset()

    @classmethod
    def from_environment(cls) -> ApiSettings:
        """The four settings in the environment, the others' defaults."""
        variables = environment.variables()
        found = {name: variables[_PREFIX + name] for name in _READ if _PREFIX + name in variables}
        return cls(
            workspace=Path(found["workspace"]) if "workspace" in found else Path.cwd(),
            home=Path(found["home"]) if "home" in found else None,
            api=found.get("api", DEFAULT_API),
            token=found.get("token"),
            given=frozenset(found),
        )

    @property
    def model_fields_set(self) -> set[str]:
        return set(self.given)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        changes = dict(update or {})
        return replace(self, **changes, given=self.given | changes.keys())

    @property
    def platform_home(self) -> Path:
        """As `Settings.platform_home` (`homes.platform_home`)."""
        return platform_home(self.workspace, self.home)

    @property
    def admin_token_path(self) -> Path:
        return self.platform_home / "admin.token"
