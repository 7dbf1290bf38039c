"""The prompt of one step: protocol and tools (system), then index, Active State, request and
the previous step's rejections (user). Rebuilt at every step from the Active State, so the
model sees exactly what the rules check against."""

from __future__ import annotations

import json
from collections.abc import Iterable

from flowstate.engine.index import RenderedIndex, state_line
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
    categories = "\n".join(f"  - {c.value}: {c.description}" for c in Category)
    relations = "\n".join(f"  - {r.value}: {r.description}" for r in RelationType)
    return f"""You are an agent with a persistent, typed memory of past requests.
At every step reply with ONE JSON object: {{"delta": [...], "access": [...], "action": ...}}

delta: changes to the states of THIS request. It is atomic: if any operation is invalid, none is
applied and you are told why at the next step. Operations:
  {{"op": "add", "key": "snake_case_key", "category": "<category>", "summary": "<one line>",
   "content": "<full detail>", "relations": [{{"type": "<TYPE>", "target": "<id or key>"}}],
   "evidence": ["<observation id of this request>"]}}
  {{"op": "update", "key": "<key of a state of THIS request>", "summary": "...", "content": "..."}}
  {{"op": "remove", "key": "<key of a state of THIS request>"}}
Record what later requests may need: the user's preferences and constraints, facts learned from
tools (cite the observation ids as evidence), decisions with their reasons, artifacts produced.
The summary is what the index shows in later requests; the content holds every detail.
Past states are never changed: to correct one, add a new state with a SUPERSEDES relation to it.
Removing a state also drops its relations and evidence.

access: ids of past states (from the Historical State Index or from revealed relations) whose
content you need, at most {limits.max_access_per_step} per step. Their content appears in the Active
State at your NEXT step: when you need it before acting, set action to null for this step.
A revealed relation shows only its type and the other end's id; access that id to open it.
Access a collapsed request id (like "r3") to list its states.

action: one of
  {{"type": "tool", "name": "<tool>", "arguments": {{...}}, "cites": ["<state ids relied on>"]}}
  {{"type": "final", "answer": "<answer to the user>", "summary": "<one line for the index>"}}
  null: no action this step.

Categories:
{categories}
Relation types (from the new state to its target):
{relations}"""


def tools_section(tools: Iterable[Tool]) -> str:
    listed = [t.schema()["function"] | {"consequential": t.consequential} for t in tools]
    if not listed:
        return "Tools: none. Answer with a final action."
    return "Tools (JSON schemas):\n" + "\n".join(
        json.dumps(_untitled(t), ensure_ascii=False, separators=(",", ":")) for t in listed
    )


def _untitled(schema: object) -> object:
    """Drop pydantic's generated `title` keys: they repeat the property names."""
    if isinstance(schema, dict):
        return {
            k: _untitled(v) for k, v in schema.items() if k != "title" or not isinstance(v, str)
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


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
        f"# Historical State Index ({index.tokens} tokens)\n{index.text}",
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
    return "\n".join(sections)


def _section(title: str, items: list[str]) -> str:
    return f"## {title}\n" + ("\n".join(items) if items else "(none)")


def _own_state(state: StateNode, active: ActiveState) -> str:
    lines = [
        f"- {state.id} (key {state.key}) [{state.category.value}] {state.summary}",
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
        lines.append(f"- step {record.step}: {record.action}")
        if record.observation:
            limit = (
                RECENT_OBSERVATION_CHARS if record.observation in shown else OLD_OBSERVATION_CHARS
            )
            lines.append("  " + _observation(active.observations[record.observation], limit))
    return lines
