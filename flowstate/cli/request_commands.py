"""Commands around one request's life: run, and for an interrupted one pending, resume, discard.

A request whose run failed (no API key, a dead database, a killed process) is kept as a draft;
`flowstate pending` shows it, `flowstate resume` continues it, `flowstate discard` drops it.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

import click

from flowstate.cli.common import confirm, emit, fails_cleanly
from flowstate.cli.connect import namespace_option, open_memory, redactor
from flowstate.errors import RequestInterrupted, UsageError
from flowstate.models.wording import counted

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.engine.agent import Agent, RunResult
    from flowstate.engine.step import Approval

_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
_MODEL = click.option(
    "--model", "-m", required=True, help="Any litellm model name, e.g. gpt-4o-mini."
)
_TOOLS = click.option(
    "--tools", "tools_spec", help="Tools as module:attribute (a list or a factory)."
)
_MAX_STEPS = click.option("--max-steps", default=12, show_default=True, type=click.IntRange(1, 200))


def load_tools(spec: str | None) -> list[Any]:
    """`module:attribute` naming a list of tools (callables or Tool objects), or a function
    returning one."""
    from flowstate.engine.tools import Tool

    if not spec:
        return []
    module_name, _, attribute = spec.partition(":")
    if not attribute:
        raise UsageError(f"--tools {spec!r}: expected module:attribute")
    try:
        found = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as e:
        raise UsageError(f"--tools {spec!r}: {e}") from e
    if callable(found) and not isinstance(found, (list, tuple)):
        try:
            found = found()
        except Exception as e:
            raise UsageError(f"--tools {spec!r}: calling it raised {type(e).__name__}: {e}") from e
    if not isinstance(found, (list, tuple)):
        raise UsageError(
            f"--tools {spec!r} is a {type(found).__name__}, not a list of tools (or a function "
            "returning one)"
        )
    bad = [t for t in found if not (isinstance(t, Tool) or callable(t))]
    if bad:
        raise UsageError(f"--tools {spec!r}: {bad[0]!r} is neither a function nor a Tool")
    return list(found)


def ask_person(asked: Approval) -> bool:
    """Approve a consequential call at the terminal; deny when nobody can answer."""
    if sys.stdin is None or not sys.stdin.isatty():
        click.echo(f"Denied {asked.tool}: consequential, and no terminal to ask.", err=True)
        return False
    return click.confirm(f"Allow {asked.tool}({asked.arguments}) citing {asked.cites}?")


def _agent(fs: Any, model: str, tools: list[Any], max_steps: int) -> Agent:
    from flowstate.engine.step import AgentConfig

    return fs.agent(
        model,
        tools=tools,
        config=AgentConfig(max_steps=max_steps),
        approve=ask_person,
        redact=redactor(),
    )


def _how_to_go_on(request_id: str, namespace: str, model: str) -> str:
    return (
        f"`flowstate resume {request_id} -N {namespace} -m {model}` continues it, "
        f"`flowstate discard {request_id} -N {namespace}` drops it"
    )


def _report(result: RunResult, as_json: bool) -> None:
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
        f"{counted(result.steps, 'step')}, {counted(len(result.states_added), 'state')} added, "
        f"{counted(result.usage.prompt_tokens, 'prompt token')}]"
    )
    emit(data, as_json, human)
    if result.error:
        click.echo(f"Error: {result.error}", err=True)
        sys.exit(1)


def _failed(namespace: str, model: str, error: RequestInterrupted) -> RequestInterrupted:
    """What to tell after a request was cut short: how to go on with it from here."""
    return RequestInterrupted(
        f"{error.cause}. Request {error.request_id} is kept: "
        + _how_to_go_on(error.request_id, namespace, model),
        error.request_id,
        error.cause,
    )


def _agent_options(fn):  # noqa: ANN001, ANN201
    """What run and resume both take: namespace, model, tools, step limit, --json."""
    for option in reversed([namespace_option, _MODEL, _TOOLS, _MAX_STEPS, _JSON]):
        fn = option(fn)
    return fn


@click.command()
@click.argument("text")
@_agent_options
@fails_cleanly
def run(
    text: str, namespace: str, model: str, tools_spec: str | None, max_steps: int, as_json: bool
) -> None:
    """Run one request to an agent with memory in NAMESPACE.

    \b
    Example:
      flowstate run "Plan a weekend in Porto" -N trips -m gpt-4o-mini --tools mytools:TOOLS
    """
    from flowstate.llm.client import check_model

    tools = load_tools(tools_spec)
    check_model(model)  # before anything is written
    with open_memory(namespace) as fs:
        agent = _agent(fs, model, tools, max_steps)
        try:
            result = agent.run(text)
        except RequestInterrupted as e:
            raise _failed(namespace, model, e) from e
    _report(result, as_json)


@click.command()
@namespace_option
@_JSON
@fails_cleanly
def pending(namespace: str, as_json: bool) -> None:
    """Show the open requests of NAMESPACE: running now, or interrupted, and who holds them.

    \b
    Example:
      flowstate pending -N trips
    """
    with open_memory(namespace, read_only=True) as fs:
        found = fs.pending()
    data = [
        {
            "request_id": r.request_id,
            "holder": r.holder,
            "held": r.held,
            "hold_expires": r.expires.isoformat() if r.expires else None,
            "steps": r.steps,
            "text": r.text,
            "updated_at": r.updated_at.isoformat() if r.updated_at else None,
        }
        for r in found
    ]
    lines = [
        f"{r.request_id}: "
        + (f"running, held by {r.holder} until {r.expires:%H:%M:%S} UTC" if r.held and r.expires
           else f"interrupted after step {r.steps} (last held by {r.holder})")
        + f"\n  {r.text[:200]}"
        for r in found
    ]  # fmt: skip
    emit(data, as_json, "\n".join(lines) or f"No open request in namespace {namespace!r}.")


@click.command()
@click.argument("request_id", required=False)
@_agent_options
@fails_cleanly
def resume(
    request_id: str | None,
    namespace: str,
    model: str,
    tools_spec: str | None,
    max_steps: int,
    as_json: bool,
) -> None:
    """Continue an interrupted request of NAMESPACE from its last saved step: REQUEST_ID, or
    the only one nobody runs now.

    \b
    Example:
      flowstate resume r3 -N trips -m gpt-4o-mini --tools mytools:TOOLS
    """
    from flowstate.llm.client import check_model

    tools = load_tools(tools_spec)
    check_model(model)
    with open_memory(namespace) as fs:
        chosen = fs.chosen(request_id)
        _say_take_over(fs, chosen)
        agent = _agent(fs, model, tools, max_steps)
        try:
            result = agent.resume(chosen)
        except RequestInterrupted as e:
            raise _failed(namespace, model, e) from e
    _report(result, as_json)


@click.command()
@click.argument("request_id", required=False)
@namespace_option
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@_JSON
@fails_cleanly
def discard(request_id: str | None, namespace: str, yes: bool, as_json: bool) -> None:
    """Drop an interrupted request of NAMESPACE (REQUEST_ID, or the only one nobody runs now);
    nothing of it was committed. Never one a live writer is running.

    \b
    Example:
      flowstate discard r3 -N trips --yes
    """
    with open_memory(namespace) as fs:
        chosen = fs.chosen(request_id)
        _say_take_over(fs, chosen)
        if not yes:
            confirm(f"Discard interrupted request {chosen} of {namespace!r}? This cannot be undone")
        dropped = fs.discard(chosen)
    emit({"discarded": dropped}, as_json, f"Discarded request {dropped} of {namespace!r}.")


def _say_take_over(fs: FlowState, request_id: str) -> None:
    """An operator's resume or discard takes the request from the writer that ran it: said on
    stderr before it does (a live writer's request is refused, never taken)."""
    found = [r for r in fs.pending() if r.request_id == request_id]
    if found and found[0].holder and not found[0].held:  # a live holder's is refused, not taken
        click.echo(
            f"Taking request {request_id} over from writer {found[0].holder} (its hold has "
            "lapsed).",
            err=True,
        )


COMMANDS = [run, pending, resume, discard]
