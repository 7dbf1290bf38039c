"""The Active State as the model reads it: this request's states, the past states and requests
opened so far, and the actions taken with their observations (recent ones in full)."""

from __future__ import annotations

from flowstate.engine.index import state_line
from flowstate.models.active import ActiveState
from flowstate.models.records import Observation, StateNode
from flowstate.models.views import IndexState, RevealedState

OLD_OBSERVATION_CHARS = 300
RECENT_OBSERVATION_CHARS = 6_000
# An opened request's text in the prompt: as much as a state's content holds by default, so
# opening requests costs no more than opening states (the whole text stays in the store).
OPENED_REQUEST_CHARS = 4_000


def active_state_text(
    active: ActiveState, recent_observations: int, listed: frozenset[str] = frozenset()
) -> str:
    """The Active State's text; `listed`: the state ids whose index lines the same prompt
    shows (a revealed one of them shows its content without its summary again)."""
    sections = [
        _section(
            f"States of this request ({active.request_id})",
            [_own_state(s, active) for s in active.states.values()],
        ),
        _section(
            "Revealed past states",
            [revealed_text(r, r.state.id in listed) for r in active.revealed.values()],
        ),
        _section(
            "Opened requests",
            [
                opened_request_text(rid, states, active.request_texts.get(rid))
                for rid, states in active.opened_requests.items()
            ],
        ),
        _section(
            "Opened past observations",
            [
                _observation(o, RECENT_OBSERVATION_CHARS)
                for o in active.opened_observations.values()
            ],
        ),
        _section("Actions so far", _actions(active, recent_observations)),
    ]
    # The request's own states always show, "(none)" included: it says nothing was recorded
    # (or a delta was refused). Other sections appear only once they have something.
    return "\n".join(s for i, s in enumerate(sections) if i == 0 or not s.endswith(_EMPTY))


_EMPTY = "\n(none)"


def _section(title: str, items: list[str]) -> str:
    return f"## {title}\n" + ("\n".join(items) if items else _EMPTY[1:])


def _own_state(state: StateNode, active: ActiveState) -> str:
    lines = [
        f"- {state.id} [{state.category.value}] {state.summary}",
        f"  content: {state.content}",
    ]
    rels = [f"{r.type.value} -> {r.target}" for r in active.relations if r.source == state.id]
    ev = [e.observation for e in active.evidence if e.state == state.id]
    if rels:
        lines.append("  relations: " + "; ".join(rels))
    if ev:
        lines.append("  evidence: " + ", ".join(ev))
    return "\n".join(lines)


def opened_request_text(request_id: str, states: list[IndexState], text: str | None) -> str:
    """An opened request: what it asked (continuation lines indented deeper than a state
    line, so no line of it reads as one; at most `OPENED_REQUEST_CHARS` of it), then its
    states' index lines."""
    lines = [f"{request_id}:"]
    if text is not None:
        shown = text[:OPENED_REQUEST_CHARS]
        if len(text) > OPENED_REQUEST_CHARS:
            shown += f"... [{len(text)} characters; the rest is not shown]"
        lines.append("  request: " + "\n    ".join(shown.splitlines() or [""]))
    return "\n".join([*lines, *(state_line(s) for s in states)])


def revealed_text(rev: RevealedState, on_index: bool = False) -> str:
    """A revealed past state as the Active State lists it; `on_index`: its index line, with
    category and summary, is in the same prompt."""
    s = rev.state
    head = f"- {s.id}" if on_index else f"- {s.id} [{s.category.value}] {s.summary}"
    if rev.superseded_by:
        head += f"{rev.superseded_mark[:-1]}: stale, do not rely on it)"
    lines = [head, f"  content: {s.content}"]
    if rev.relations:
        rels = [
            f"{r.type} {'->' if r.direction == 'out' else '<-'} {r.other}"
            + (f" ({r.removed})" if r.removed else "")
            for r in rev.relations
        ]
        lines.append("  relations: " + "; ".join(rels))
    return "\n".join(lines)


def _observation(obs: Observation, limit: int) -> str:
    output = obs.output
    if len(output) > limit:
        output = output[:limit] + f"... [{len(obs.output)} characters; rest kept, not shown]"
    status = "error" if obs.is_error else "ok"
    return f"- {obs.id} {obs.tool}({obs.arguments}) [{status}]\n  output: {output}"


def _actions(active: ActiveState, recent: int) -> list[str]:
    lines: list[str] = []
    shown = [r.observation for r in active.log if r.observation][-recent:]
    for record in active.log:
        # A call that ran is named once, by its observation line below.
        lines.append(f"- step {record.step}:" + ("" if record.observation else f" {record.action}"))
        if record.observation:
            limit = (
                RECENT_OBSERVATION_CHARS if record.observation in shown else OLD_OBSERVATION_CHARS
            )
            lines.append("  " + _observation(active.observations[record.observation], limit))
    return lines
