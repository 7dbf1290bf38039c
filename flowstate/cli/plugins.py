"""Command families from other distributions, found through the `flowstate.commands` entry
point group. The benchmarks live in `flowstate-memory-bench`; without it, `flowstate bench` says how
to install it instead of failing with "no such command".

A plugin's commands wrap themselves in `fails_cleanly`, as the built-in ones do, for the same
error messages and exit codes."""

from __future__ import annotations

import importlib
import os
import sys

import click

from flowstate.cli.common import fails_cleanly

__all__ = ["GROUP", "INSTALL_HINTS", "entry_points", "fails_cleanly", "plugin_commands"]

GROUP = "flowstate.commands"
INSTALL_HINTS = {
    "bench": (
        "the benchmarks are the separate distribution flowstate-memory-bench: "
        "pip install ./bench (from a checkout)"
    ),
}


def plugin_commands() -> list[click.Command]:
    """Every installed plugin command, then a stand-in for each known one that is missing."""
    found: dict[str, click.Command] = {}
    for name, target in entry_points(GROUP):
        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module.strip()), attr.strip())
        if not isinstance(command, click.Command):
            raise TypeError(f"entry point {target!r} in {GROUP} is not a click command")
        found.setdefault(name, command)  # the first on sys.path wins, as for imports
    missing = [_missing(name, hint) for name, hint in INSTALL_HINTS.items() if name not in found]
    return [*found.values(), *missing]


def entry_points(group: str) -> list[tuple[str, str]]:
    """(name, "module:attr") of every entry point of `group` that the installed
    distributions declare (their `*.dist-info/entry_points.txt` on sys.path), read directly:
    `importlib.metadata` would parse every distribution's metadata first, which costs more
    than the rest of `flowstate --help`."""
    found: list[tuple[str, str]] = []
    for folder in sys.path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue  # a zip file or a folder that is gone
        for name in sorted(names):
            if name.endswith((".dist-info", ".egg-info")):
                found += _declared(os.path.join(folder, name, "entry_points.txt"), group)
    return found


def _declared(path: str, group: str) -> list[tuple[str, str]]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    out, current = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
        elif current == group and "=" in line and not line.startswith(("#", ";")):
            name, _, target = line.partition("=")
            out.append((name.strip(), target.split("[", 1)[0].strip()))  # extras not needed
    return out


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
