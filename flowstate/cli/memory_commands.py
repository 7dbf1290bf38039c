"""Commands around a namespace's memory: index, history, forget, export, import."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from flowstate.cli.common import confirm, emit, fails_cleanly
from flowstate.cli.connect import namespace_option, open_memory
from flowstate.cli.show_command import request_text
from flowstate.errors import NotFoundError, UsageError
from flowstate.models.wording import counted

if TYPE_CHECKING:
    from flowstate.api import FlowState, NamespaceContents
    from flowstate.models.records import Request

_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")


@click.command()
@namespace_option
@click.option("--budget", type=click.IntRange(50), default=None, help="Index token budget.")
@_JSON
@fails_cleanly
def index(namespace: str, budget: int | None, as_json: bool) -> None:
    """Print the Historical State Index exactly as the model sees it, with its token count.

    \b
    Example:
      flowstate index -N demo
    """
    with open_memory(namespace, read_only=True) as fs:
        _require_history(fs, namespace)
        rendered = fs.index(budget)
    data = {
        "text": rendered.text,
        "tokens": rendered.tokens,
        "budget": rendered.budget,
        "collapsed": sorted(rendered.collapsed),
    }
    emit(data, as_json, f"{rendered.text}\n\n({rendered.tokens} tokens; budget {rendered.budget})")


@click.command()
@namespace_option
@_JSON
@fails_cleanly
def history(namespace: str, as_json: bool) -> None:
    """List the requests of a namespace, oldest first.

    \b
    Example:
      flowstate history -N demo
    """
    with open_memory(namespace, read_only=True) as fs:
        requests = _require_history(fs, namespace)
    data = [r.model_dump(mode="json", exclude={"text", "answer"}) for r in requests]
    emit(data, as_json, "\n".join(request_text(r) for r in requests))


@click.command()
@click.argument("record_id", required=False)
@namespace_option
@click.option("--all", "everything", is_flag=True, help="Forget the whole namespace.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@_JSON
@fails_cleanly
def forget(
    record_id: str | None, namespace: str, everything: bool, yes: bool, as_json: bool
) -> None:
    """Forget a request (r3), a state (r3.key), or with --all the whole namespace.

    Nothing is left behind: nodes, relationships and properties are deleted, and the counts
    are printed.

    \b
    Examples:
      flowstate forget r3 -N demo --yes
      flowstate forget --all -N demo
    """
    from flowstate.models import ids

    if bool(record_id) == everything:
        raise UsageError("give either an id or --all")
    if not everything and not (
        ids.is_request_id(record_id or "") or ids.is_state_id(record_id or "")
    ):
        raise UsageError(f"{record_id!r} is not a request id (r3) or a state id (r3.key)")
    what = f"{record_id} of {namespace!r}"
    with open_memory(namespace) as fs:
        if everything:

            def ask(contents: NamespaceContents) -> None:
                nonlocal what
                what = contents.describe()
                if not yes:
                    confirm(f"Forget {what}? This cannot be undone")

            # Refused (NamespaceBusy) also when a request began while the prompt waited.
            counts = fs.forget_all(ask)
            left = ""
        else:
            if not yes:
                confirm(f"Forget {what}? This cannot be undone")
            counts = removal = fs.forget(record_id or "")
            left = removal.left_behind()  # what stays: still superseded, or a relation lost
    said = f"{counts.describe()} deleted" + (f"; {left}" if left else "")
    emit(counts.model_dump(), as_json, f"Forgot {what}: {said}.")


@click.command()
@namespace_option
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File to write (default: standard output).",
)
@fails_cleanly
def export(namespace: str, output: Path | None) -> None:
    """Export a namespace as JSON Lines.

    \b
    Example:
      flowstate export -N demo -o demo.jsonl
    """
    with open_memory(namespace, read_only=True) as fs:
        _require_history(fs, namespace)
        lines = list(fs.export_jsonl())
    if output is None:
        click.echo("".join(lines), nl=False)
        return
    try:
        output.write_text("".join(lines), encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot write {output}: {e.strerror or e}") from e
    click.echo(f"Wrote {counted(len(lines), 'line')} to {output}.", err=True)


@click.command(name="import")
@click.argument("source", type=click.File("rb"))
@namespace_option
@_JSON
@fails_cleanly
def import_(source: Any, namespace: str, as_json: bool) -> None:
    """Import JSON Lines into an empty namespace (all or nothing).

    \b
    Example:
      flowstate import demo.jsonl -N demo_copy
    """
    raw = source.read()
    try:
        lines = raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise UsageError(
            f"{source.name} is not a FlowState export: not UTF-8 text (byte {e.start})"
        ) from e
    if not any(line.strip() for line in lines):
        click.echo(f"Warning: {source.name} holds no records; nothing imported.", err=True)
        emit({"nodes": 0, "relationships": 0}, as_json, f"Imported nothing into {namespace!r}.")
        return
    with open_memory(namespace) as fs:
        counts = fs.import_jsonl(lines)
    emit(
        counts.model_dump(),
        as_json,
        f"Imported into {namespace!r}: {counts.describe()}.",
    )


@click.command()
@_JSON
@fails_cleanly
def namespaces(as_json: bool) -> None:
    """List the namespaces of the database with what each holds (counts, never content).

    \b
    Example:
      flowstate namespaces
    """
    with open_memory("default", read_only=True) as fs:
        found = fs.namespaces()
    data = [n.model_dump() for n in found]
    lines = [
        f"{n.namespace}  {counted(n.requests, 'request')}  {counted(n.states, 'state')}  "
        f"{counted(n.observations, 'observation')}  {counted(n.decisions, 'decision')}"
        + (f"  {n.drafts} open" if n.drafts else "")
        + (f" ({n.held} running)" if n.held else "")
        for n in found
    ]
    emit(data, as_json, "\n".join(lines) or "No namespaces yet.")


def _require_history(fs: FlowState, namespace: str) -> list[Request]:
    """The namespace's requests; a NotFoundError that says which namespace was looked at, how
    it was chosen, and which namespaces the database holds, when it has none."""
    requests = fs.history()
    if requests:
        return requests
    found = fs.namespaces()
    here = next((n for n in found if n.namespace == namespace), None)
    if here is not None and here.drafts:
        raise NotFoundError(
            f"namespace {namespace!r} has no committed request yet, only "
            f"{counted(here.drafts, 'open request')} (flowstate pending -N {namespace})"
        )
    source = click.get_current_context().get_parameter_source("namespace")
    how = ""
    if source is click.core.ParameterSource.DEFAULT:
        how = " (the default: no --namespace/-N given)"
    elif source is click.core.ParameterSource.ENVIRONMENT:
        how = " (from FLOWSTATE_NAMESPACE)"
    names = [n.namespace for n in found if n.namespace != namespace]
    if not names:
        held = "the database holds no namespace yet"
    else:
        more = f" and {len(names) - MAX_NAMED} more (flowstate namespaces)" * (
            len(names) > MAX_NAMED
        )
        held = f"namespaces in this database: {', '.join(names[:MAX_NAMED])}{more}"
    raise NotFoundError(f"namespace {namespace!r}{how} has no requests; {held}")


# How many other namespaces an error about an empty one names.
MAX_NAMED = 10


COMMANDS = [index, history, forget, export, import_, namespaces]
