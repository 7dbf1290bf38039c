"""Commands for deployment controls: `why` (provenance) and `retention apply`."""

from __future__ import annotations

import click

from flowstate.cli.common import confirm, emit, fails_cleanly
from flowstate.cli.connect import RETENTION_VARIABLE, namespace_option, open_memory
from flowstate.models.wording import counted


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
    with open_memory(namespace, read_only=True) as fs:
        prov = fs.why(state_id, depth)
    emit(prov.model_dump(mode="json"), as_json, prov.tree())


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
    from flowstate.api import Removal
    from flowstate.safety.retention import RetentionPolicy

    from_env = ctx.get_parameter_source("policy") is click.core.ParameterSource.ENVIRONMENT
    parsed = RetentionPolicy.parse(policy, RETENTION_VARIABLE if from_env else "--policy")
    with open_memory(namespace, retention=False) as fs:
        doomed = {k: n for k, n in fs.expiring(parsed).items() if n}
        if not doomed:
            emit({}, as_json, f"Policy: {parsed.describe()}\nnothing to expire")
            return
        if not yes:
            listed = ", ".join(counted(n, f"{kind} record") for kind, n in doomed.items())
            confirm(f"Expire {listed} of {namespace!r}? This cannot be undone")
        counts = fs.apply_retention(parsed)
    removals = {kind: Removal.model_validate(c) for kind, c in counts.items()}
    human = "\n".join(
        f"{kind}: {r.describe()} deleted"
        + (f"; {left}" if (left := r.left_behind("expired")) else "")
        for kind, r in removals.items()
    )
    emit(counts, as_json, f"Policy: {parsed.describe()}\n{human}")


COMMANDS = [why, retention]
