"""Opening a namespace's memory for a command: the configured Neo4j, or the managed local one."""

from __future__ import annotations

import click

from flowstate.api import FlowState
from flowstate.local.embedded import resolve_database
from flowstate.safety.redaction import PatternRedactor, builtin_redactor
from flowstate.safety.retention import RetentionPolicy
from flowstate.settings import LocalServerSettings, MemorySettings, Neo4jSettings
from flowstate.store.codec import check_namespace

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
    """Connect to the configured (or managed local) Neo4j; apply FLOWSTATE_RETENTION if set."""
    check_namespace(namespace)  # before a local server may be started for nothing
    memory = MemorySettings()
    policy = RetentionPolicy.parse(memory.retention) if memory.retention else None
    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), _say)
    return FlowState.connect(
        settings=settings, namespace=namespace, read_only=read_only, retention=policy
    )


def redactor() -> PatternRedactor | None:
    """The built-in redactor unless FLOWSTATE_REDACT=false."""
    return builtin_redactor() if MemorySettings().redact else None


def _say(message: str) -> None:
    click.echo(message, err=True)
