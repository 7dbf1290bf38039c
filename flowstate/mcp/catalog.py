"""The MCP tools: name, title, what they take and return, their annotations, and which
servers list them (a `--read-only` server lists only the reads; `memory_forget` only with
`--allow-forget`). Pure data: `flowstate.mcp.tools` holds what each one does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flowstate.compact import schemas as s


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    args: type[s.Args]
    out: type[s.Out]
    description: str
    read_only: bool  # changes no memory (with a request_id, a read is a step of that request)
    destructive: bool = False  # may delete what was kept
    idempotent: bool = False  # the same call again changes nothing more
    forget: bool = False  # listed only when the server was started with --allow-forget

    def annotations(self) -> dict[str, Any]:
        """The MCP tool annotations, as sent (camelCase)."""
        return {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": False,  # a closed memory: no web, no other system
        }


READS = [
    ToolSpec(
        "memory_index",
        "Memory index",
        s.IndexArgs,
        s.IndexOut,
        "The Historical State Index of this memory: past requests and their states as "
        "`id [category] summary` lines. Read it first; open what matters with memory_reveal "
        "(only ids shown here or by memory_search open). With request_id, the index as that "
        "request sees it: ordered for its text, refreshed when other requests commit.",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "memory_search",
        "Search memory",
        s.SearchArgs,
        s.SearchOut,
        "Find states whose summary or content share words with `query` (full-text, no model "
        "call), best first, superseded ones marked. Every hit counts as shown: memory_reveal "
        "may open it next (with request_id, inside that request).",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "memory_reveal",
        "Open past states",
        s.RevealArgs,
        s.RevealOut,
        "Open past states: full content and their relations as type + other end's id. At most 8 "
        "ids per call, only ids already shown (the index, a search, a write's reply, or a "
        "relation end opened before, inside a request); a relation's far end (a state or an "
        "observation) opens only when asked for in a later call. Ids that cannot open are listed "
        "with the reason and the rest open. With a request_id this is a step of that request and "
        "what opens becomes citable. Page 2+ re-reads what is open.",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "memory_why",
        "Why a state holds",
        s.WhyArgs,
        s.WhyOut,
        "Why a state holds: its chain of DEPENDS_ON / DERIVED_FROM / SUPERSEDES relations and "
        "evidence down to the raw tool observations and requests, each state marked when it "
        "has been SUPERSEDED since.",
        read_only=True,
        idempotent=True,
    ),
    ToolSpec(
        "memory_history",
        "Past requests",
        s.HistoryArgs,
        s.HistoryOut,
        "Every committed request of this memory, oldest first: id, when, outcome, summary.",
        read_only=True,
        idempotent=True,
    ),
]

WRITES = [
    ToolSpec(
        "memory_remember",
        "Remember a fact",
        s.RememberArgs,
        s.RememberOut,
        "Keep one fact in one call: a request that records it as a state and commits at once "
        "(one transaction, the same rules as memory_record). Use it for a simple fact the "
        "user states; use memory_begin ... memory_commit for work with tools and evidence. To "
        "correct a fact, remember the new one with a SUPERSEDES relation to the old state.",
        read_only=False,
    ),
    ToolSpec(
        "memory_begin",
        "Begin a request",
        s.BeginArgs,
        s.BeginOut,
        "Begin a request: returns its request_id (pass it to every later call) and the index. "
        "Then, as you work: memory_reveal what you need, memory_observe tool results you rely "
        "on, memory_record what you learn or decide, memory_guard before an action with "
        "consequences, and memory_commit at the end (or memory_discard).",
        read_only=False,
    ),
    ToolSpec(
        "memory_record",
        "Record states",
        s.RecordArgs,
        s.RecordOut,
        "Record what this request learned or decided, as states: add (new key, category, "
        "summary, content, relations to visible states, evidence = observation ids), update "
        "or remove (only states of THIS request; past ones change by a new state that "
        "SUPERSEDES them). All of the delta applies or none of it: on an error, fix and "
        "resend it.",
        read_only=False,
    ),
    ToolSpec(
        "memory_observe",
        "Keep a tool result",
        s.ObserveArgs,
        s.ObserveOut,
        "Keep a tool result you got, so that states can cite it as evidence. Returns its "
        "observation id (e.g. r7.o2); an observation no state cites is not committed.",
        read_only=False,
    ),
    ToolSpec(
        "memory_guard",
        "Check an action",
        s.GuardArgs,
        s.GuardOut,
        "Ask before an action with consequences (book, pay, send, delete): it must cite "
        "states of this request or revealed ones, none of them superseded. The decision is "
        "recorded either way. Run the tool yourself only when this approves.",
        read_only=False,
    ),
    ToolSpec(
        "memory_commit",
        "Commit the request",
        s.CommitArgs,
        s.CommitOut,
        "End the request: its states, relations, cited observations and decisions are "
        "committed in one transaction and appear in the index from the next request. Sending "
        "it again after a failure never commits twice: it returns the commit's result.",
        read_only=False,
        idempotent=True,
    ),
    ToolSpec(
        "memory_discard",
        "Discard the request",
        s.DiscardArgs,
        s.DiscardOut,
        "Drop the open request: nothing of it is committed.",
        read_only=False,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        "memory_forget",
        "Forget",
        s.ForgetArgs,
        s.ForgetOut,
        "Forget a request (r3: everything it produced, and the user's words it kept) or one "
        "state (r3.key) for good: nodes, relationships and every copy in open requests' drafts "
        "are deleted. A fact kept with memory_remember is forgotten whole with its request id. "
        "Ask the user first; there is no undo.",
        read_only=False,
        destructive=True,
        idempotent=True,
        forget=True,
    ),
]

SPECS = {spec.name: spec for spec in [*READS, *WRITES]}


def listed(*, read_only: bool, allow_forget: bool) -> list[ToolSpec]:
    """The tools a server offers: only those that can work there."""
    if read_only:
        return list(READS)
    return [*READS, *(t for t in WRITES if allow_forget or not t.forget)]
