"""`flowstate show`: one record of a namespace, for people (or as JSON)."""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

import click

from flowstate.cli.common import emit, fails_cleanly
from flowstate.cli.connect import namespace_option, open_memory
from flowstate.errors import UsageError
from flowstate.models.wording import counted

if TYPE_CHECKING:
    from flowstate.models.records import ActionDecision, Observation, Request
    from flowstate.models.views import Direction, RevealedState
    from flowstate.store import Repository


@click.command()
@click.argument("record_id")
@namespace_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines.")
@fails_cleanly
def show(record_id: str, namespace: str, as_json: bool) -> None:
    """Show a state, request, observation or action decision, with relations as type + id.

    States superseded by a newer one are marked `(SUPERSEDED by ...)`, as in the index.

    \b
    Examples:
      flowstate show r3.hotel_choice -N demo
      flowstate show r4 -N demo
      flowstate show r4.a1 -N demo      # the approval decision on a consequential call
    """
    with open_memory(namespace, read_only=True) as fs:
        data, human = _shown(fs.repository, record_id)
    emit(data, as_json, human)


def _shown(repo: Repository, record_id: str) -> tuple[dict, str]:
    from flowstate.engine.index import state_line
    from flowstate.models import ids

    if ids.is_state_id(record_id):
        [revealed] = repo.reveal([record_id])
        data = {
            "kind": "state",
            **revealed.state.model_dump(mode="json"),
            "relations": [r.model_dump(mode="json") for r in revealed.relations],
            "superseded_by": revealed.superseded_by,
        }
        return data, state_text(revealed)
    if ids.is_request_id(record_id):
        req = repo.get_request(record_id)
        states = repo.request_states(record_id)
        data = {
            "kind": "request",
            **req.model_dump(mode="json"),
            "states": [s.model_dump(mode="json") for s in states],
        }
        return data, "\n".join([request_text(req), *(state_line(s) for s in states)])
    if ids.is_observation_id(record_id):
        obs = repo.get_observation(record_id)
        return {"kind": "observation", **obs.model_dump(mode="json")}, observation_text(obs)
    if ids.is_decision_id(record_id):
        decision = repo.get_decision(record_id)
        return {"kind": "decision", **decision.model_dump(mode="json")}, decision_text(decision)
    raise UsageError(f"{record_id!r} is not an id like r3, r3.key, r3.o1 or r3.a1")


def request_text(req: Request) -> str:
    return (
        f"{req.id}  {req.finished_at:%Y-%m-%d %H:%M}  {req.outcome.value:<10} "
        f"{counted(req.steps, 'step')}  {counted(req.usage.prompt_tokens, 'prompt token')}  "
        f"{req.summary}"
    )


def state_text(revealed: RevealedState) -> str:
    state = revealed.state
    newer = revealed.superseded_by
    mark = f"  (SUPERSEDED by {', '.join(newer)})" if newer else ""
    lines = [
        f"{state.id} [{state.category.value}] {state.summary}{mark}",
        f"  from request {state.request_id}, created {state.created_at:%Y-%m-%d %H:%M}",
        f"  content: {state.content}",
    ]
    lines += [f"  {r.type} {_arrow(r.direction)} {r.other}" for r in revealed.relations]
    return "\n".join(lines)


def _arrow(direction: Direction) -> str:
    from flowstate.models.views import Direction

    match direction:
        case Direction.OUT:
            return "->"
        case Direction.IN:
            return "<-"
        case _:
            assert_never(direction)


def observation_text(obs: Observation) -> str:
    return (
        f"{obs.id} {obs.tool}({obs.arguments}) [{'error' if obs.is_error else 'ok'}]\n"
        f"  request {obs.request_id}, step {obs.step}\n  output: {obs.output}"
    )


def decision_text(decision: ActionDecision) -> str:
    verdict = "approved" if decision.approved else "denied"
    cites = ", ".join(decision.cites) or "nothing"
    return (
        f"{decision.id} {decision.tool}({decision.arguments}) [{verdict}]\n"
        f"  request {decision.request_id}, step {decision.step}, citing {cites}\n"
        f"  reason: {decision.reason or '(none given)'}"
    )
