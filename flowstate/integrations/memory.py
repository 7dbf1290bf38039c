"""What every framework adapter gives its model, without I/O: the memory tools (their argument
models, checked as the MCP server checks its own), their results as the MCP server's compact
text, the instructions a run begins with, and the `cites` a consequential tool takes.

    args = parse("memory_reveal", {"ids": ["r1.budget"]})     # Refused, with the reason
    text = revealed_text(opened, args)                          # what the model reads
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import Field
from pydantic_core import to_json

from flowstate.compact import render
from flowstate.compact import schemas as s
from flowstate.compact.arguments import Refused, bounded, validated
from flowstate.engine.active_text import active_state_text
from flowstate.engine.active_text import revealed_text as revealed_state
from flowstate.engine.opening import Opened
from flowstate.engine.session import Recorded
from flowstate.models.active import ActiveState
from flowstate.models.records import MAX_SUMMARY_CHARS
from flowstate.models.step import DeltaOp
from flowstate.models.views import RevealedState

REVEAL = "memory_reveal"
RECORD = "memory_record"
SEARCH = "memory_search"
CITES = "cites"
# A result too long for one tool result comes in pages (as the MCP server's default).
PAGE_CHARS = 40_000
# The own states, openings and tool results of a request picked up after a crash: its
# model's messages were lost with the process, so its instructions show them once.
RECENT_OBSERVATIONS = 3


class RevealArgs(s.Args):
    ids: s.Ids
    page: s.PageNo = 1


class RecordArgs(s.Args):
    delta: Annotated[
        list[DeltaOp],
        Field(
            min_length=1,
            max_length=100,
            description="add / update / remove operations; evidence: the observation ids "
            "tool results were kept as. " + s.CATEGORIES + ". " + s.RELATIONS,
        ),
    ]
    summary: Annotated[
        str | None,
        Field(
            max_length=MAX_SUMMARY_CHARS,
            description="one line for the index naming what this request did (the last one "
            "given is committed with the answer)",
        ),
    ] = None


class SearchArgs(s.Args):
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=2_000,
            description="words to look for in past states' summaries and contents",
        ),
    ]
    limit: Annotated[int, Field(ge=1, le=50, description="most hits returned")] = 10


TOOLS: dict[str, tuple[type[s.Args], str]] = {
    REVEAL: (
        RevealArgs,
        "Open past states shown in the memory index, by a search or at a relation end (at "
        "most 8 ids a call): their full content and relations. Open a state before relying "
        "on it; what opens may be cited.",
    ),
    RECORD: (
        RecordArgs,
        "Record what later requests will need: add, update or remove this request's states, "
        "all of the delta or none of it. Past states never change: add one that SUPERSEDES "
        "it. Cite tool results as evidence by the ids they were kept as.",
    ),
    SEARCH: (
        SearchArgs,
        "Find past states whose summary or content share words with `query`, best first; "
        "each hit may then be opened with memory_reveal.",
    ),
}

CITES_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string"},
    "description": "ids of the states this call relies on (this request's or opened ones); "
    "a consequential call citing none is refused",
}

INSTRUCTIONS = """# Memory (FlowState)
Below is the index of what earlier requests recorded, one line per state. Open what you need \
with memory_reveal before relying on it; memory_search finds more. Record what later requests \
will need with memory_record, citing tool results by the ids they were kept as, and give a \
one-line summary of this request there. A tool that takes `cites` acts on the world: cite the \
states it relies on.
# Historical State Index
"""


def parse(name: str, arguments: Any) -> RevealArgs | RecordArgs | SearchArgs:
    """A memory tool's arguments, checked (`Refused` with the reason otherwise). An argument
    the tool does not take, such as a namespace, is refused by name."""
    if isinstance(arguments, str):  # some models send the arguments as JSON text
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError:
            raise Refused("arguments must be a JSON object") from None
    model, _ = TOOLS[name]
    parsed = validated(model, arguments)
    assert isinstance(parsed, RevealArgs | RecordArgs | SearchArgs)
    return parsed


def instructions(
    index: str, picked_up: ActiveState | None = None, prefetched: Sequence[RevealedState] = ()
) -> str:
    """The memory's part of the model's instructions: the index, and the states the engine
    opened before the request's first call (its prefetch); for a request picked up from its
    draft, what it holds so far instead."""
    text = INSTRUCTIONS + index
    if prefetched and picked_up is None:
        opened = "\n".join(revealed_state(rev) for rev in prefetched)
        text += f"\n# Opened for this request before it began\n{opened}"
    if picked_up is not None:
        state = active_state_text(picked_up, RECENT_OBSERVATIONS)
        text += f"\n# This request ({picked_up.request_id}), picked up where it stopped\n{state}"
    return text


def revealed_text(opened: Opened, args: RevealArgs) -> str:
    nothing = not (opened.states or opened.requests or opened.observations)
    if nothing and opened.rejections:
        raise Refused(bounded("nothing opened: " + "; ".join(opened.rejections)))
    return render.revealed(opened, args.page, PAGE_CHARS)[1]


def recorded_text(recorded: Recorded) -> str:
    if not recorded.applied:  # each rejection says "delta rejected, nothing applied: ..."
        raise Refused(bounded("; ".join(recorded.rejections)))
    told = "".join(f"\nnote: {n}" for n in recorded.rejections)
    return f"applied: {', '.join(recorded.states) or 'no state changed'}{told}"


def ops(args: RecordArgs) -> list[dict[str, Any]]:
    return [op.model_dump(exclude_none=True) for op in args.delta]


def kept_text(output: str, observation_id: str) -> str:
    """A tool result as the model reads it: with the id it was kept as, to cite."""
    return f"{output}\n[kept as {observation_id}: cite it as evidence]"


def refused_text(tool: str, reason: str) -> str:
    """A consequential call the guard refused, as the model reads it."""
    return f"denied (do not run {tool}): {reason}"


def with_cites(schema: dict[str, Any]) -> dict[str, Any]:
    """A consequential tool's parameters with `cites` (required: the model says what the
    call relies on, even when that is nothing)."""
    properties = {**schema.get("properties", {}), CITES: CITES_SCHEMA}
    required = [*schema.get("required", []), CITES]
    return {**schema, "properties": properties, "required": required}


def split_cites(arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The tool's own arguments, and the ids its call cites (`Refused` when they are not a
    list of strings)."""
    rest = dict(arguments)
    cites = rest.pop(CITES, [])
    if not isinstance(cites, list) or not all(isinstance(c, str) for c in cites):
        raise Refused(f"{CITES}: a list of state ids")
    return rest, cites


def answer_text(output: object) -> str:
    """A run's output as the request's answer: text as it is, anything else as JSON."""
    if isinstance(output, str):
        return output
    try:
        return to_json(output).decode()
    except Exception:  # an output JSON cannot hold: its repr still answers
        return repr(output)


def summary_of(given: str, answer: str) -> str:
    """The request's summary: the one the model gave, else the answer's first line."""
    if given.strip():
        return given
    return next((line.strip() for line in answer.splitlines() if line.strip()), "")
