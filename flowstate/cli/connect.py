"""Opening a namespace's memory for a command: the configured Neo4j, or the managed local one.

The library is imported when a command opens its memory, not when the command is declared
(see `flowstate.cli`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from flowstate.models.wording import counted

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.safety.redaction import PatternRedactor

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


def open_memory(
    namespace: str,
    *,
    read_only: bool = False,
    retention: bool = True,
    say: Callable[[str], None] | None = None,
) -> FlowState:
    """Connect to the configured (or managed local) Neo4j. A writable namespace gets
    FLOWSTATE_RETENTION applied first (unless `retention=False`), and what it expired is said
    on stderr (or to `say`); read-only commands neither read nor apply it."""
    say = say or _say
    from flowstate.api import FlowState
    from flowstate.local.embedded import resolve_database
    from flowstate.models.ids import check_namespace
    from flowstate.safety.retention import RetentionPolicy
    from flowstate.settings import LocalServerSettings, MemorySettings, Neo4jSettings

    check_namespace(namespace)  # before a local server may be started for nothing
    policy = None
    if not read_only and retention:
        text = MemorySettings().retention
        policy = RetentionPolicy.parse(text, RETENTION_VARIABLE) if text else None
    settings = resolve_database(Neo4jSettings(), LocalServerSettings(), say)
    fs = FlowState.connect(settings=settings, namespace=namespace, read_only=read_only)
    if policy is not None:
        try:
            expired = fs.apply_retention(policy)
        except BaseException:
            fs.close()
            raise
        said = expired_text(expired)
        if said:
            say(f"{RETENTION_VARIABLE} ({policy.describe()}): expired {said}.")
    return fs


RETENTION_VARIABLE = "FLOWSTATE_RETENTION"


def expired_text(counts: dict[str, dict[str, Any]]) -> str:
    """`3 observation nodes, 1 environment node (r1.budget stays superseded by r3.budget
    (expired))` for the kinds that lost anything."""
    from flowstate.api import Removal

    lost = []
    for kind, c in counts.items():
        if c["nodes"]:
            left = Removal.model_validate(c).left_behind("expired")
            lost.append(counted(c["nodes"], f"{kind} node") + (f" ({left})" if left else ""))
    return ", ".join(lost)


def redactor() -> PatternRedactor | None:
    """The built-in redactor unless FLOWSTATE_REDACT=false."""
    from flowstate.safety.redaction import builtin_redactor
    from flowstate.settings import MemorySettings

    return builtin_redactor() if MemorySettings().redact else None


def _say(message: str) -> None:
    click.echo(message, err=True)
