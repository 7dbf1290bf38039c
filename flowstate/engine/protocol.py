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
    limits: Limits,
    reply_format: ReplyFormat = ReplyFormat.LINES,
    has_past: bool = True,
    index_once: bool = False,
) -> str:
    """The protocol; without past requests (a namespace's first) in keyword lines, only what
    can be done then: nothing can be opened or superseded yet. `index_once`: a request's later
    calls do not show the index again (`IndexResend.FIRST_CALL`), which the model is told."""
    lines = _LINES if has_past else _FIRST_LINES
    body = _JSON if reply_format is ReplyFormat.JSON else lines
    once = INDEX_ONCE if has_past and index_once else ""
    return body.format(k=limits.max_access_per_step, once=once) + "\n" + _vocabulary(has_past)


INDEX_ONCE = " The index shows at your first step only: open what later steps use."


_LINES = """Reply in lines, as needed:
ACCESS <ids>: open up to {k} ids shown in the index (a request id: its text and states) or at \
relation ends (closed until accessed). They open in your next reply: act now unless the action \
needs them.{once}
ADD <key> <category> "<one-line summary>" "<all detail>" [<TYPE> <target>]... \
[EVIDENCE <observation ids>]: what later requests need; target: a shown id or a key.
UPDATE <key> "<summary>" "<content>" or REMOVE <key>: only states added in THIS request.
TOOL <name> {{arguments}} CITES <ids it relies on>
SUMMARY <one line> (with one ADD: optional), then FINAL <answer>. No TOOL or FINAL: you wait.
Changes apply all or none. Past states never change: ADD one that SUPERSEDES it."""

# A first request has nothing to open, supersede or wait for.
_FIRST_LINES = """Reply in lines, as needed:
ADD <key> <category> "<one-line summary>" "<all detail>" [<TYPE> <key>]... \
[EVIDENCE <observation ids>]: what later requests need.
UPDATE <key> "<summary>" "<content>" or REMOVE <key>
TOOL <name> {{arguments}} CITES <ids it relies on>
SUMMARY <one line> (with one ADD: optional), then FINAL <answer>."""

_JSON = """Memory: the index lists past requests and their states. Reply with one JSON object \
{{"delta", "access", "action"}} following the given schema.
access: up to {k} ids shown in the index (a request id: its text and states) or at \
relation ends (closed until accessed). They open in your next reply: act now unless the action \
needs them.{once}
delta: add (key, category, summary: one line, content: all detail, relations to a shown id or a \
key of this request, evidence: this request's observation ids); update or remove: only states \
added in THIS request. All ops apply or none.
action: a tool call (name, arguments, cites: ids it relies on; consequential tools need them), \
a final answer (answer, summary: one line for the index, optional with one add), or null: \
you wait.
Record what later requests need. Past states never change: add one that SUPERSEDES it."""


def _vocabulary(has_past: bool) -> str:
    """The categories and relation types; SUPERSEDES only where there is a past to replace."""
    types = [r.value for r in RelationType if has_past or r is not RelationType.SUPERSEDES]
    return f"category: {', '.join(c.value for c in Category)}. TYPE: {', '.join(types)}."
