"""`flowstate show`: one record of a namespace, for people (or as JSON)."""

from __future__ import annotations

from typing import TYPE_CHECKING, assert_never

import click

from flowstate.cli.common import emit, fails_cleanly
from flowstate.cli.connect import namespace_option, open_memory
from flowstate.models.wording import counted

if TYPE_CHECKING:
    from flowstate.models.records import ActionDecision, Observation, Request
    from flowstate.models.views import Direction, RecordView, RevealedState


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
        found = fs.get(record_id)
    data, human = _shown(found)
    emit(data, as_json, human)


def _shown(found: RecordView) -> tuple[dict, str]:
    from flowstate.engine.index import state_line
    from flowstate.models.records import Observation
    from flowstate.models.views import RequestRecord, RevealedState

    if isinstance(found, RevealedState):
        data = {
            "kind": "state",
            **found.state.model_dump(mode="json"),
            "relations": [r.model_dump(mode="json") for r in found.relations],
            "superseded_by": found.superseded_by,
        }
        return data, state_text(found)
    if isinstance(found, RequestRecord):
        data = {
            "kind": "request",
            **found.request.model_dump(mode="json", exclude={"handle_hash", "idempotency_key"}),
            "states": [s.model_dump(mode="json") for s in found.states],
        }
        lines = [request_text(found.request), *(state_line(s) for s in found.states)]
        return data, "\n".join(lines)
    if isinstance(found, Observation):
        return {"kind": "observation", **found.model_dump(mode="json")}, observation_text(found)
    return {"kind": "decision", **found.model_dump(mode="json")}, decision_text(found)


def request_text(req: Request) -> str:
    return (
        f"{req.id}  {req.finished_at:%Y-%m-%d %H:%M}  {req.outcome.value:<10} "
        f"{counted(req.steps, 'step')}  {counted(req.usage.prompt_tokens, 'prompt token')}  "
        f"{req.summary}"
    )


def state_text(revealed: RevealedState) -> str:
    state = revealed.state
    lines = [
        f"{state.id} [{state.category.value}] {state.summary}{revealed.superseded_mark}",
        f"  from request {state.request_id}, created {state.created_at:%Y-%m-%d %H:%M}",
        f"  content: {state.content}",
    ]
    lines += [
        f"  {r.type} {_arrow(r.direction)} {r.other}" + (f" ({r.removed})" if r.removed else "")
        for r in revealed.relations
    ]
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
