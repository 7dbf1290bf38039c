"""The prompt of one step: protocol and tools (system), then index, Active State, request and
the previous step's rejections (user). Rebuilt at every step from the Active State, so the
model sees exactly what the rules check against."""

from __future__ import annotations

from collections.abc import Iterable

from flowstate.engine.index import RenderedIndex, state_line
from flowstate.engine.tool_text import tools_text
from flowstate.engine.tools import Tool
from flowstate.models.active import ActiveState
from flowstate.models.records import Observation, StateNode
from flowstate.models.views import RevealedState
from flowstate.models.vocab import Category, RelationType
from flowstate.rules.limits import Limits

OLD_OBSERVATION_CHARS = 300
RECENT_OBSERVATION_CHARS = 6_000

Message = dict[str, str]


def protocol(limits: Limits) -> str:
    """The rules, as short as a model can still follow them; identical at every call."""
    categories = "; ".join(f"{c.value} ({c.description})" for c in Category)
    relations = "; ".join(f"{r.value} ({r.description})" for r in RelationType)
    return f"""You are an agent with a typed memory of past requests. At every step reply with one
JSON object {{"delta", "access", "action"}} following the given schema.

delta: atomic operations on THIS request's states (one invalid op voids all; the next step
says why).
- add: key (snake_case; id <request id>.<key>), category, summary (one line for later indexes),
  content (all detail), relations [{{type, target: a visible id or a key of this request}}],
  evidence [observation ids of this request].
- update (summary, content) and remove: only keys added in THIS request.
Record what later requests need: preferences, constraints, facts from tools with evidence,
decisions and why, artifacts. Past states never change: correct one with a new state that
SUPERSEDES it.

access: up to {limits.max_access_per_step} ids per step: index states, collapsed requests ("r3"),
far ends of revealed relations (closed until accessed). Content shows from your NEXT step: set
action null to wait for it, or act now if the action does not need it.

action: {{type: "tool", name, arguments, cites: ids relied on (consequential tools need
them)}}, {{type: "final", answer, summary: one line for the index}}, or null.

Categories: {categories}.
Relation types, new state -> target: {relations}."""


def tools_section(tools: Iterable[Tool]) -> str:
    return tools_text(tools)


def messages(
    active: ActiveState,
    index: RenderedIndex,
    tools: Iterable[Tool],
    limits: Limits,
    max_steps: int,
    recent_observations: int = 3,
) -> list[Message]:
    system = protocol(limits) + "\n\n" + tools_section(tools)
    parts = [
        # No token count in the header: it changes at every commit and would end the prefix
        # that consecutive requests share (and that provider prompt caching reuses) right here.
        f"# Historical State Index\n{index.text}",
        "# Active State\n" + active_state_text(active, recent_observations),
        f"# User request ({active.request_id})\n{active.text}",
    ]
    if active.rejections:
        parts.append(
            "# Rejected at your previous step\n" + "\n".join(f"- {r}" for r in active.rejections)
        )
    parts.append(f"Step {active.step + 1} of {max_steps}. Reply with the JSON object only.")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def active_state_text(active: ActiveState, recent_observations: int) -> str:
    sections = [
        _section(
            f"States of this request ({active.request_id})",
            [_own_state(s, active) for s in active.states.values()],
        ),
        _section("Revealed past states", [_revealed(r) for r in active.revealed.values()]),
        _section(
            "Opened requests",
            [
                f"{rid}:\n" + "\n".join(state_line(s) for s in states)
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


def _revealed(rev: RevealedState) -> str:
    s = rev.state
    head = f"- {s.id} [{s.category.value}] {s.summary}"
    if rev.superseded_by:
        head += f"  (SUPERSEDED by {', '.join(rev.superseded_by)}: stale, do not rely on it)"
    lines = [head, f"  content: {s.content}"]
    if rev.relations:
        rels = [
            f"{r.type} {'->' if r.direction == 'out' else '<-'} {r.other}" for r in rev.relations
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
