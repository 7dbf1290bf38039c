"""Command families from other distributions, found through the `flowstate.commands` entry
point group. The benchmarks live in `flowstate-memory-bench`; without it, `flowstate bench` says how
to install it instead of failing with "no such command"."""

from __future__ import annotations

import sys

import click

GROUP = "flowstate.commands"
INSTALL_HINTS = {
    "bench": (
        "the benchmarks are the separate distribution flowstate-memory-bench: "
        "pip install ./bench (from a checkout)"
    ),
}


def plugin_commands() -> list[click.Command]:
    """Every installed plugin command, then a stand-in for each known one that is missing."""
    from importlib.metadata import entry_points  # scanning every installed distribution

    found: dict[str, click.Command] = {}
    for ep in entry_points(group=GROUP):
        command = ep.load()
        if not isinstance(command, click.Command):
            raise TypeError(f"entry point {ep.value!r} in {GROUP} is not a click command")
        found[ep.name] = command
    missing = [_missing(name, hint) for name, hint in INSTALL_HINTS.items() if name not in found]
    return [*found.values(), *missing]


class PluginGroup(click.Group):
    """A group whose plugin commands are looked up only when a name is not built in, or when
    all commands are listed (`--help`): `flowstate index` never scans the installed
    distributions."""

    _plugins: dict[str, click.Command] | None = None

    def plugins(self) -> dict[str, click.Command]:
        if self._plugins is None:
            self._plugins = {c.name or "": c for c in plugin_commands()}
        return self._plugins

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or self.plugins().get(cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.plugins()})


def _missing(name: str, hint: str) -> click.Command:
    @click.command(
        name=name,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        help=f"Not installed: {hint}.\n\n\b\nExample:\n  pip install ./bench\n"
        f"  flowstate {name} --quick",
    )
    def stand_in() -> None:
        click.echo(f"Error: {hint}", err=True)
        sys.exit(2)

    return stand_in
