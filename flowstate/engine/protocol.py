"""The rules the model reads at every call, in the reply format it writes.

Identical at every call of an agent (the start of the prompt a provider can cache), and as
short as a model can still follow it: this text is a fixed price of every call.
"""

from __future__ import annotations

from enum import StrEnum

from flowstate.models.vocab import Category, RelationType
from flowstate.rules.limits import Limits


class ReplyFormat(StrEnum):
    """How the model writes its step.

    `lines`: keyword lines (`flowstate.llm.step_lines`), described in the protocol; no schema
    is sent. `json`: the step object, its JSON schema sent as `response_format` (or put into
    the prompt for a model without structured output).
    """

    LINES = "lines"
    JSON = "json"


def protocol(
    limits: Limits, reply_format: ReplyFormat = ReplyFormat.LINES, has_past: bool = True
) -> str:
    """The protocol; without past requests (a namespace's first) in keyword lines, only what
    can be done then: nothing can be opened or superseded yet."""
    lines = _LINES if has_past else _FIRST_LINES
    body = _JSON if reply_format is ReplyFormat.JSON else lines
    return body.format(k=limits.max_access_per_step) + "\n" + _vocabulary()


_LINES = """Memory: the index lists past requests and their states. Reply in keyword lines, only \
those you need:
ACCESS <ids>: up to {k} ids shown in the index (a collapsed request's id lists its states) or at \
relation ends (closed until accessed). They open in your next reply: act now unless the action \
needs them.
ADD {{"key","category","summary","content","relations":[{{"type","target"}}],"evidence":[ids]}}: \
a state of this request, id <request id>.<key>; summary: one line; content: all detail; target: \
a shown id or a key of this request; evidence: this request's observation ids.
UPDATE {{"key","summary","content"}} or REMOVE <key>: only states added in THIS request.
TOOL <name> {{arguments}} CITES <ids it relies on; consequential tools need them>
SUMMARY <one line for the index>, then FINAL <answer>. No TOOL or FINAL: you wait.
ADD, UPDATE and REMOVE apply all or none. Record what later requests need. Past states never \
change: ADD one that SUPERSEDES it."""

_FIRST_LINES = """Nothing is recorded yet. Reply in keyword lines, only those you need:
ADD {{"key","category","summary","content","relations":[{{"type","target"}}],"evidence":[ids]}}: \
a state later requests will need, id <request id>.<key>; summary: one line; content: all \
detail; target: a key of this request; evidence: its observation ids.
UPDATE {{"key","summary","content"}} or REMOVE <key>.
TOOL <name> {{arguments}} CITES <ids it relies on; consequential tools need them>
SUMMARY <one line for the index>, then FINAL <answer>. No TOOL or FINAL: you wait.
ADD, UPDATE and REMOVE apply all or none."""

_JSON = """Memory: the index lists past requests and their states. Reply with one JSON object \
{{"delta", "access", "action"}} following the given schema.
access: up to {k} ids shown in the index (a collapsed request's id lists its states) or at \
relation ends (closed until accessed). They open in your next reply: act now unless the action \
needs them.
delta: add (key, category, summary: one line, content: all detail, relations to a shown id or a \
key of this request, evidence: this request's observation ids); update or remove: only states \
added in THIS request. All ops apply or none.
action: a tool call (name, arguments, cites: ids it relies on; consequential tools need them), \
a final answer (answer, summary: one line for the index), or null: you wait.
Record what later requests need. Past states never change: add one that SUPERSEDES it."""


def _vocabulary() -> str:
    categories = ", ".join(
        f"{c.value} ({_CATEGORY_HINTS[c]})" if c in _CATEGORY_HINTS else c.value for c in Category
    )
    relations = ", ".join(
        f"{r.value} ({_RELATION_HINTS[r]})" if r in _RELATION_HINTS else r.value
        for r in RelationType
    )
    return f"category: {categories}.\ntype: {relations}."


# Only where the name alone would be misread.
_CATEGORY_HINTS = {
    Category.CONSTRAINT: "must hold",
    Category.ENVIRONMENT: "facts",
    Category.DECISION: "and why",
}
_RELATION_HINTS = {
    RelationType.SUPERSEDES: "target stale",
}
