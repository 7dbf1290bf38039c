"""Commands around a namespace's memory: run, index, show, history, forget, export, import."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import click

from flowstate.cli.common import emit, fails_cleanly
from flowstate.cli.connect import namespace_option, open_memory, redactor
from flowstate.engine.step import AgentConfig, Approval
from flowstate.errors import NotFoundError, UsageError
from flowstate.models import ids
from flowstate.models.records import Observation, Request, StateNode

_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")


def _load_tools(spec: str | None) -> list[Any]:
    """`module:attribute` naming a list of tools (callables or Tool objects)."""
    if not spec:
        return []
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise UsageError(f"--tools {spec!r}: expected module:attribute")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as e:
        raise UsageError(f"--tools {spec!r}: {e}") from e
    return list(found() if callable(found) and not isinstance(found, list) else found)


def ask_person(asked: Approval) -> bool:
    """Approve a consequential call at the terminal; deny when nobody can answer."""
    if not sys.stdin.isatty():
        click.echo(f"Denied {asked.tool}: consequential, and no terminal to ask.", err=True)
        return False
    return click.confirm(f"Allow {asked.tool}({asked.arguments}) citing {asked.cites}?")


@click.command()
@click.argument("text")
@namespace_option
@click.option("--model", "-m", required=True, help="Any litellm model name, e.g. gpt-4o-mini.")
@click.option("--tools", "tools_spec", help="Tools as module:attribute (a list or a factory).")
@click.option("--max-steps", default=12, show_default=True, type=click.IntRange(1, 200))
@_JSON
@fails_cleanly
def run(
    text: str, namespace: str, model: str, tools_spec: str | None, max_steps: int, as_json: bool
) -> None:
    """Run one request to an agent with memory in NAMESPACE.

    \b
    Example:
      flowstate run "Plan a weekend in Porto" -N trips -m gpt-4o-mini --tools mytools:TOOLS
    """
    tools = _load_tools(tools_spec)
    with open_memory(namespace) as fs:
        agent = fs.agent(
            model,
            tools=tools,
            config=AgentConfig(max_steps=max_steps),
            approve=ask_person,
            redact=redactor(),
        )
        result = agent.run(text)
    data = {
        "request_id": result.request_id,
        "answer": result.answer,
        "outcome": result.outcome.value,
        "steps": result.steps,
        "states_added": result.states_added,
        "revealed": result.revealed,
        "usage": result.usage.model_dump(),
        "error": result.error,
    }
    human = (
        f"{result.answer}\n\n[{result.request_id}: {result.outcome.value}, "
        f"{result.steps} steps, {len(result.states_added)} states added, "
        f"{result.usage.prompt_tokens} prompt tokens]"
    )
    emit(data, as_json, human)
    if result.error:
        click.echo(f"Error: {result.error}", err=True)
        sys.exit(1)


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
        _require_history(fs.history(), namespace)
        rendered = fs.index(budget)
    data = {
        "text": rendered.text,
        "tokens": rendered.tokens,
        "budget": rendered.budget,
        "collapsed": sorted(rendered.collapsed),
    }
    emit(data, as_json, f"{rendered.text}\n\n({rendered.tokens} tokens; budget {rendered.budget})")


@click.command()
@click.argument("record_id")
@namespace_option
@_JSON
@fails_cleanly
def show(record_id: str, namespace: str, as_json: bool) -> None:
    """Show a state, request or observation, with its relations as type + id.

    \b
    Examples:
      flowstate show r3.hotel_choice -N demo
      flowstate show r4 -N demo
    """
    with open_memory(namespace, read_only=True) as fs:
        repo = fs.repository
        if ids.is_state_id(record_id):
            [revealed] = repo.reveal([record_id])
            data = {
                "kind": "state",
                **revealed.state.model_dump(mode="json"),
                "relations": [r.model_dump(mode="json") for r in revealed.relations],
            }
            human = _state_text(
                revealed.state, [(r.type, r.direction.value, r.other) for r in revealed.relations]
            )
        elif ids.is_request_id(record_id):
            req = repo.get_request(record_id)
            states = repo.request_states(record_id)
            data = {
                "kind": "request",
                **req.model_dump(mode="json"),
                "states": [s.model_dump(mode="json") for s in states],
            }
            human = _request_text(req) + "".join(
                f"\n  {s.id} [{s.category.value}] {s.summary}" for s in states
            )
        elif ids.is_observation_id(record_id):
            obs = repo.get_observation(record_id)
            data = {"kind": "observation", **obs.model_dump(mode="json")}
            human = _observation_text(obs)
        else:
            raise UsageError(f"{record_id!r} is not an id like r3, r3.key or r3.o1")
    emit(data, as_json, human)


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
        requests = _require_history(fs.history(), namespace)
    data = [r.model_dump(mode="json", exclude={"text", "answer"}) for r in requests]
    emit(data, as_json, "\n".join(_request_text(r) for r in requests))


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
    if bool(record_id) == everything:
        raise UsageError("give either an id or --all")
    what = f"namespace {namespace!r}" if everything else f"{record_id} of {namespace!r}"
    with open_memory(namespace) as fs:
        repo = fs.repository
        if everything:
            _require_history(repo.history(), namespace)
        if not yes:
            click.confirm(f"Forget {what}? This cannot be undone", abort=True)
        if everything:
            counts = repo.forget_namespace()
        elif ids.is_request_id(record_id or ""):
            counts = repo.forget_request(record_id or "")
        elif ids.is_state_id(record_id or ""):
            counts = repo.forget_state(record_id or "")
        else:
            raise UsageError(f"{record_id!r} is not a request id (r3) or a state id (r3.key)")
    emit(
        counts.model_dump(),
        as_json,
        f"Forgot {what}: {counts.nodes} nodes, {counts.relationships} relationships deleted.",
    )


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
        _require_history(fs.history(), namespace)
        lines = list(fs.repository.export_jsonl())
    if output is None:
        click.echo("".join(lines), nl=False)
    else:
        output.write_text("".join(lines), encoding="utf-8")
        click.echo(f"Wrote {len(lines)} lines to {output}.", err=True)


@click.command(name="import")
@click.argument("source", type=click.File("r", encoding="utf-8"))
@namespace_option
@_JSON
@fails_cleanly
def import_(source: Any, namespace: str, as_json: bool) -> None:
    """Import JSON Lines into an empty namespace (all or nothing).

    \b
    Example:
      flowstate import demo.jsonl -N demo_copy
    """
    lines = source.read().splitlines()
    with open_memory(namespace) as fs:
        counts = fs.repository.import_jsonl(lines)
    emit(
        counts.model_dump(),
        as_json,
        f"Imported into {namespace!r}: {counts.nodes} nodes, {counts.relationships} relationships.",
    )


def _require_history(requests: list[Request], namespace: str) -> list[Request]:
    if not requests:
        raise NotFoundError(f"namespace {namespace!r} has no requests")
    return requests


def _request_text(req: Request) -> str:
    return (
        f"{req.id}  {req.finished_at:%Y-%m-%d %H:%M}  {req.outcome.value:<10} "
        f"{req.steps} steps  {req.usage.prompt_tokens} prompt tokens  {req.summary}"
    )


def _state_text(state: StateNode, relations: list[tuple[str, str, str]]) -> str:
    lines = [
        f"{state.id} [{state.category.value}] {state.summary}",
        f"  from request {state.request_id}, created {state.created_at:%Y-%m-%d %H:%M}",
        f"  content: {state.content}",
    ]
    lines += [f"  {t} {'->' if d == 'out' else '<-'} {other}" for t, d, other in relations]
    return "\n".join(lines)


def _observation_text(obs: Observation) -> str:
    return (
        f"{obs.id} {obs.tool}({obs.arguments}) [{'error' if obs.is_error else 'ok'}]\n"
        f"  request {obs.request_id}, step {obs.step}\n  output: {obs.output}"
    )


COMMANDS = [run, index, show, history, forget, export, import_]
