"""Commands for deployment controls: `why` (provenance) and `retention apply`."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from flowstate.cli.common import confirm, emit, fails_cleanly
from flowstate.cli.connect import RETENTION_VARIABLE, namespace_option, open_memory
from flowstate.errors import UsageError

if TYPE_CHECKING:
    from flowstate.models.views import Provenance

_OUTPUT_CHARS = 160


@click.command()
@click.argument("state_id")
@namespace_option
@click.option("--depth", default=6, show_default=True, type=click.IntRange(0, 20))
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@fails_cleanly
def why(state_id: str, namespace: str, depth: int, as_json: bool) -> None:
    """Print a state's evidence chain down to the raw observations and requests.

    \b
    Example:
      flowstate why r8.plan_summary -N demo
    """
    from flowstate.models import ids

    if not ids.is_state_id(state_id):
        raise UsageError(f"{state_id!r} is not a state id like r3.hotel_choice")
    with open_memory(namespace, read_only=True) as fs:
        prov = fs.repository.provenance(state_id, depth)
        # Validity: a state in the chain may have been superseded since; say so on its line.
        stale = {
            r.state.id: r.superseded_by
            for r in fs.reveal([s.id for s in prov.states])
            if r.superseded_by
        }
    data = prov.model_dump(mode="json") | {"superseded": stale}
    emit(data, as_json, provenance_text(prov, stale))


def provenance_text(prov: Provenance, stale: dict[str, list[str]] | None = None) -> str:
    stale = stale or {}
    states = {s.id: s for s in prov.states}
    observations = {o.id: o for o in prov.observations}
    out_edges: dict[str, list[tuple[str, str]]] = {}
    for e in prov.edges:
        if e.type != "PRODUCED":
            out_edges.setdefault(e.source, []).append((e.type, e.target))
    lines: list[str] = []
    shown: set[str] = set()

    def label(node: str) -> str:
        if node in states:
            s = states[node]
            mark = f"  (SUPERSEDED by {', '.join(stale[node])})" if node in stale else ""
            return f"{s.id} [{s.category.value}] {s.summary}{mark}"
        o = observations[node]
        output = o.output if len(o.output) <= _OUTPUT_CHARS else o.output[:_OUTPUT_CHARS] + "..."
        return f"{o.id} {o.tool}({o.arguments}) -> {output}"

    def walk(node: str, prefix: str) -> None:
        children = sorted(out_edges.get(node, []))
        for i, (kind, target) in enumerate(children):
            last = i == len(children) - 1
            seen = target in shown
            lines.append(
                f"{prefix}{'└─' if last else '├─'} {kind} {label(target)}"
                + ("  (see above)" if seen else "")
            )
            if not seen:
                shown.add(target)
                walk(target, prefix + ("   " if last else "│  "))

    shown.add(prov.state_id)
    lines.append(label(prov.state_id))
    walk(prov.state_id, "")
    lines.append("\nRequests:")
    lines += [
        f"  {r.id} {r.finished_at:%Y-%m-%d %H:%M} {r.summary}: {r.text[:100]}"
        for r in prov.requests
    ]
    return "\n".join(lines)


@click.group()
def retention() -> None:
    """Retention policies: how long each kind of memory is kept.

    \b
    Example:
      flowstate retention apply -N support --policy '{"observation": 30, "preference": null}'
    """


@retention.command()
@namespace_option
@click.option(
    "--policy",
    envvar=RETENTION_VARIABLE,
    required=True,
    help='JSON: kind -> days (0 to 36500) or null, kinds: the five categories and "observation".',
)
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@click.pass_context
@fails_cleanly
def apply(ctx: click.Context, namespace: str, policy: str, yes: bool, as_json: bool) -> None:
    """Expire now what the policy no longer keeps, and print what was deleted.

    Shows how many records would go and asks first, unless --yes.

    \b
    Example:
      flowstate retention apply -N demo --policy '{"observation": 0}' --yes
    """
    from flowstate.safety.retention import RetentionPolicy

    from_env = ctx.get_parameter_source("policy") is click.core.ParameterSource.ENVIRONMENT
    parsed = RetentionPolicy.parse(policy, RETENTION_VARIABLE if from_env else "--policy")
    with open_memory(namespace, retention=False) as fs:
        doomed = {k: n for k, n in fs.repository.expiring(parsed.cutoffs()).items() if n}
        if not doomed:
            emit({}, as_json, f"Policy: {parsed.describe()}\nnothing to expire")
            return
        if not yes:
            listed = ", ".join(f"{n} {kind}" for kind, n in doomed.items())
            confirm(f"Expire {listed} of {namespace!r}? This cannot be undone")
        counts = fs.apply_retention(parsed)
    human = "\n".join(
        f"{kind}: {c['nodes']} nodes, {c['relationships']} relationships deleted"
        for kind, c in counts.items()
    )
    emit(counts, as_json, f"Policy: {parsed.describe()}\n{human}")


COMMANDS = [why, retention]
