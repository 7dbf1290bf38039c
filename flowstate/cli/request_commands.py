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
from flowstate.errors import ModelError, UsageError

if TYPE_CHECKING:
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


def _how_to_go_on(namespace: str, model: str) -> str:
    return (
        f"`flowstate resume -N {namespace} -m {model}` continues it, "
        f"`flowstate discard -N {namespace}` drops it"
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
        f"{result.steps} steps, {len(result.states_added)} states added, "
        f"{result.usage.prompt_tokens} prompt tokens]"
    )
    emit(data, as_json, human)
    if result.error:
        click.echo(f"Error: {result.error}", err=True)
        sys.exit(1)


def _failed(agent: Agent, namespace: str, model: str, error: ModelError) -> ModelError:
    """What to tell after a model failure: a request that did nothing yet is not kept."""
    from flowstate.models.active import ActiveState

    draft = agent.repo.load_draft()
    if draft is None:
        return error
    rid, payload = draft
    try:
        untouched = ActiveState.model_validate_json(payload).step == 0
    except ValueError:
        untouched = False
    if untouched:
        agent.discard()
        return ModelError(f"{error}. Nothing was done, so nothing was kept")
    return ModelError(f"{error}. Request {rid} is kept: {_how_to_go_on(namespace, model)}")


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
        interrupted = agent.pending()
        if interrupted:
            raise UsageError(
                f"request {interrupted} of namespace {namespace!r} was interrupted: "
                f"{_how_to_go_on(namespace, model)} (`flowstate pending -N {namespace}` shows it)"
            )
        try:
            result = agent.run(text)
        except ModelError as e:
            raise _failed(agent, namespace, model, e) from e
    _report(result, as_json)


@click.command()
@namespace_option
@_JSON
@fails_cleanly
def pending(namespace: str, as_json: bool) -> None:
    """Show the interrupted request of NAMESPACE, if any, and who is writing there now.

    \b
    Example:
      flowstate pending -N trips
    """
    from flowstate.models.active import ActiveState

    with open_memory(namespace, read_only=True) as fs:
        draft = fs.repository.load_draft()
        lease = fs.repository.lease()
    writer = None if lease is None else {"owner": lease.owner, "expires": lease.expires}
    if draft is None:
        emit(
            {"pending": None, "writer": writer},
            as_json,
            _writer_line(writer) or (f"No interrupted request in namespace {namespace!r}."),
        )
        return
    rid, payload = draft
    data: dict[str, Any] = {"pending": {"request_id": rid}, "writer": writer}
    try:
        active = ActiveState.model_validate_json(payload)
    except ValueError:
        human = f"{rid}: interrupted (its draft cannot be read by this version; discard it)"
    else:
        ended = active.finish is not None
        data["pending"] |= {
            "text": active.text,
            "steps": active.step,
            "started_at": active.started_at.isoformat(),
            "states": sorted(s.id for s in active.states.values()),
            "ended_before_commit": ended,
        }
        state = "ended, only its commit is missing" if ended else f"after step {active.step}"
        human = (
            f"{rid}: interrupted {state}; started {active.started_at:%Y-%m-%d %H:%M}, "
            f"{len(active.states)} states so far\n  {active.text[:200]}"
        )
    line = _writer_line(writer)
    emit(data, as_json, human + (f"\n{line}" if line else ""))


def _writer_line(writer: dict[str, Any] | None) -> str:
    if writer is None:
        return ""
    return f"Running now: writer {writer['owner']} (lease until {writer['expires']:%H:%M:%S} UTC)."


@click.command()
@_agent_options
@fails_cleanly
def resume(
    namespace: str, model: str, tools_spec: str | None, max_steps: int, as_json: bool
) -> None:
    """Continue the interrupted request of NAMESPACE from its last saved step.

    \b
    Example:
      flowstate resume -N trips -m gpt-4o-mini --tools mytools:TOOLS
    """
    from flowstate.llm.client import check_model

    tools = load_tools(tools_spec)
    check_model(model)
    with open_memory(namespace) as fs:
        agent = _agent(fs, model, tools, max_steps)
        if agent.pending() is None:
            raise UsageError(f"no interrupted request in namespace {namespace!r}")
        try:
            result = agent.resume()
        except ModelError as e:
            rid = agent.pending()
            raise ModelError(
                f"{e}. Request {rid} is still kept: {_how_to_go_on(namespace, model)}"
            ) from e
    _report(result, as_json)


@click.command()
@namespace_option
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@_JSON
@fails_cleanly
def discard(namespace: str, yes: bool, as_json: bool) -> None:
    """Drop the interrupted request of NAMESPACE; nothing of it was committed.

    \b
    Example:
      flowstate discard -N trips --yes
    """
    from flowstate.engine.lease import WriterLease
    from flowstate.engine.step import AgentConfig

    with open_memory(namespace) as fs:
        draft = fs.repository.load_draft()
        if draft is None:
            raise UsageError(f"no interrupted request in namespace {namespace!r}")
        if not yes:
            confirm(
                f"Discard interrupted request {draft[0]} of {namespace!r}? This cannot be undone"
            )
        # Under the writer lease, as an agent's discard(): never from under a running request.
        with WriterLease(fs.repository, AgentConfig().lease_seconds):
            fs.repository.discard_draft(draft[0])
        dropped = draft[0]
    emit({"discarded": dropped}, as_json, f"Discarded request {dropped} of {namespace!r}.")


COMMANDS = [run, pending, resume, discard]
