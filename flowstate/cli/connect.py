"""Opening a namespace's memory for a command: the configured Neo4j, or the managed local one."""

from __future__ import annotations

import re

import click

from flowstate.api import FlowState
from flowstate.errors import UsageError
from flowstate.local.embedded import resolve_database
from flowstate.models import ids
from flowstate.settings import LocalServerSettings, Neo4jSettings

NAMESPACE_HELP = "Memory namespace (one per agent or tenant)."


def namespace_option(fn):  # noqa: ANN001, ANN201
    return click.option(
        "--namespace",
        "-N",
        default="default",
        show_default=True,
        envvar="FLOWSTATE_NAMESPACE",
        help=NAMESPACE_HELP,
    )(fn)


def open_memory(namespace: str, *, read_only: bool = False) -> FlowState:
    if not re.fullmatch(ids.NAMESPACE_PATTERN, namespace):
        raise UsageError(
            f"invalid namespace {namespace!r}: letters, digits, '_', '.', '-' (at most 128)"
        )
    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), _say)
    return FlowState.connect(settings=settings, namespace=namespace, read_only=read_only)


def _say(message: str) -> None:
    click.echo(message, err=True)
