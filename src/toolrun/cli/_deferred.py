"""Sub-apps imported on first use: `toolrun --help` lists them by name and help line, and
`toolrun call` never imports what `toolrun mcp` or `toolrun agents` needs (the MCP SDK,
the database)."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    # The classes typer's own Context and commands derive from (its vendored click).
    from typer._click import Command, Context


@dataclass(frozen=True)
class SubApp:
    """A Typer sub-app registered by name: `home` is "module:attribute"."""

    name: str
    home: str
    help: str


class DeferredGroup(TyperGroup):
    """Stands for a sub-app in its parent's listing; importing and building it waits until
    a command line (or a shell completion) enters it."""

    def __init__(self, sub_app: SubApp) -> None:
        super().__init__(name=sub_app.name, help=sub_app.help)
        self.sub_app = sub_app
        self._group: TyperGroup | None = None

    def loaded(self) -> TyperGroup:
        """The sub-app's group, with the help line it is listed by."""
        if self._group is None:
            module, _, attribute = self.sub_app.home.partition(":")
            holder = typer.Typer()
            holder.add_typer(
                getattr(importlib.import_module(module), attribute),
                name=self.sub_app.name,
                help=self.sub_app.help,
            )
            self._group = cast(TyperGroup, typer.main.get_group(holder).commands[self.sub_app.name])
        return self._group

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: Context | None = None,
        **extra: Any,
    ) -> Context:
        return self.loaded().make_context(info_name, args, parent=parent, **extra)

    def list_commands(self, ctx: Context) -> list[str]:
        return self.loaded().list_commands(ctx)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        return self.loaded().get_command(ctx, cmd_name)


def deferring(sub_apps: Sequence[SubApp]) -> type[TyperGroup]:
    """A group class (Typer's `cls`) that lists `sub_apps` after its own commands, each
    imported when a command line enters it."""

    class Deferring(TyperGroup):
        def __init__(self, **attrs: Any) -> None:
            super().__init__(**attrs)
            for sub_app in sub_apps:
                self.add_command(DeferredGroup(sub_app))

    return Deferring
