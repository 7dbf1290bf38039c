"""What each MCP tool takes and returns, as pydantic models: their JSON schemas are the tools'
input and output schemas, and a result's structured content is the output model, dumped.

Pure data. Every string and list is bounded, so that validating a hostile argument is cheap
and its error short; FlowState's own rules then check what the bounds let through.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from flowstate.models import Category
from flowstate.models.records import MAX_CONTENT_CHARS, MAX_REQUEST_TEXT_CHARS, MAX_SUMMARY_CHARS
from flowstate.models.step import DeltaOp, RelationSpec

ID_CHARS = 200  # longer than any valid id; a longer one is refused before it is looked at
# The vocabularies as a host's model must read them: it sees only the schemas.
CATEGORIES = (
    "category: preference (what the user likes; soft, may be traded off), constraint (a "
    "requirement that must hold), environment (a fact about the world, the people or the "
    "tools, e.g. a name or an opening time), decision (a choice made, and why), artifact "
    "(something produced: a plan, a booking, a draft)"
)
RELATIONS = (
    "relation types, from the new state to its target: DERIVED_FROM (inferred from it), "
    "DEPENDS_ON (valid only while it is), REFINES (narrows or details it), SUPERSEDES "
    "(replaces it: it is now stale), CONTRADICTS (conflicts with it; both are kept)"
)


class Args(BaseModel):
    # An unknown argument (a `namespace`, a typo) is refused by name, never ignored.
    model_config = ConfigDict(extra="forbid")


RequestId = Annotated[
    str, Field(max_length=ID_CHARS, description="the id memory_begin returned, e.g. r7")
]
# A request and its handle where a call may also stand outside any request.
OpenRequestId = Annotated[
    str | None,
    Field(
        max_length=ID_CHARS,
        description="an open request (the id memory_begin returned, with its handle): the call "
        "is a step of it; without, a read outside any request",
    ),
]
Handle = Annotated[
    str,
    Field(
        max_length=ID_CHARS,
        description="the handle memory_begin returned with the request_id: only the client "
        "that began a request acts on it",
    ),
]
OptionalHandle = Annotated[
    str | None,
    Field(max_length=ID_CHARS, description="with request_id: the handle memory_begin returned"),
]
PageNo = Annotated[int, Field(ge=1, le=100_000, description="page of a long result, from 1")]
Ids = Annotated[
    list[Annotated[str, Field(max_length=ID_CHARS)]],
    Field(
        min_length=1,
        max_length=64,
        description="ids shown in the index, by a search or at a relation end: states "
        "(r3.key), collapsed requests (r3) or observations (r3.o1); at most 8 open per call",
    ),
]
JsonObject = Annotated[dict[str, Any], Field(description="the tool call's arguments")]


# --- inputs ----------------------------------------------------------------------------------


class IndexArgs(Args):
    page: PageNo = 1
    request_id: Annotated[
        str | None,
        Field(
            max_length=ID_CHARS,
            description="an open request: the index as it sees it (ordered for its text, "
            "refreshed when others commit)",
        ),
    ] = None
    handle: OptionalHandle = None


class HistoryArgs(Args):
    page: PageNo = 1


class WhyArgs(Args):
    state_id: Annotated[
        str, Field(max_length=ID_CHARS, description="a state id, e.g. r3.hotel_choice")
    ]
    depth: Annotated[int, Field(ge=0, le=20, description="relation hops followed")] = 6
    page: PageNo = 1


class SearchArgs(Args):
    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=2_000,
            description="words to look for in states' summaries and contents (plain words; "
            "no query syntax)",
        ),
    ]
    limit: Annotated[int, Field(ge=1, le=50, description="most hits returned")] = 10
    request_id: OpenRequestId = None
    handle: OptionalHandle = None


class RevealArgs(Args):
    ids: Ids
    request_id: OpenRequestId = None
    handle: OptionalHandle = None
    page: PageNo = 1


class BeginArgs(Args):
    text: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_REQUEST_TEXT_CHARS,
            description="the user's request, verbatim",
        ),
    ]


class RecordArgs(Args):
    request_id: RequestId
    handle: Handle
    delta: Annotated[
        list[DeltaOp],
        Field(
            min_length=1,
            max_length=100,
            description="add / update / remove operations. " + CATEGORIES + ". " + RELATIONS,
        ),
    ]


class ObserveArgs(Args):
    request_id: RequestId
    handle: Handle
    tool: Annotated[
        str, Field(min_length=1, max_length=128, description="the tool's name: letters, digits, _")
    ]
    arguments: JsonObject
    output: Annotated[str, Field(max_length=1_000_000, description="the tool's result, as text")]
    is_error: bool = False


class GuardArgs(Args):
    request_id: RequestId
    handle: Handle
    tool: Annotated[
        str,
        Field(
            min_length=1, max_length=128, description="the consequential tool about to be called"
        ),
    ]
    arguments: JsonObject
    cites: Annotated[
        list[Annotated[str, Field(max_length=ID_CHARS)]],
        Field(max_length=64, description="ids of the states the call relies on"),
    ]


class CommitArgs(Args):
    request_id: RequestId
    handle: Handle
    answer: Annotated[
        str,
        Field(max_length=MAX_REQUEST_TEXT_CHARS, description="the final answer given to the user"),
    ]
    summary: Annotated[
        str, Field(max_length=MAX_SUMMARY_CHARS, description="one line for the index")
    ] = ""


class DiscardArgs(Args):
    request_id: RequestId
    handle: Handle


class RememberArgs(Args):
    summary: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_SUMMARY_CHARS,
            description="the fact in one line, as the index will show it",
        ),
    ]
    category: Annotated[Category, Field(description=CATEGORIES)]
    content: Annotated[
        str | None,
        Field(max_length=MAX_CONTENT_CHARS, description="full detail (default: the summary)"),
    ] = None
    key: Annotated[
        str | None,
        Field(max_length=64, description="snake_case name of the state (default: from summary)"),
    ] = None
    relations: Annotated[
        list[RelationSpec],
        Field(max_length=8, description="relations to states already shown. " + RELATIONS),
    ] = []
    text: Annotated[
        str | None,
        Field(
            max_length=MAX_REQUEST_TEXT_CHARS,
            description="what the user said, kept as the request (default: the summary)",
        ),
    ] = None
    idempotency_key: Annotated[
        str | None,
        Field(
            max_length=200,
            description="the same fact sent again within 10 minutes is stored once; send a "
            "new key to store the same fact twice on purpose (another fact is always stored)",
        ),
    ] = None


class ForgetArgs(Args):
    id: Annotated[
        str,
        Field(
            max_length=ID_CHARS, description="a request (r3: all it produced) or a state (r3.key)"
        ),
    ]


# --- outputs ---------------------------------------------------------------------------------
# A host may show its model nothing but `JSON.stringify` of the structured content (Claude Code
# drops the text block when structured content is present), so each output is written to be
# read as it is: no field that echoes an argument or repeats another, a listing as the lines
# the text shows, and every field at its default left out of the dump (`Out.dump`).


class Out(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def dump(self) -> dict[str, Any]:
        """The structured content: the fields that say something (a default says nothing)."""
        return self.model_dump(mode="json", exclude_defaults=True)


class Paged(Out):
    page: int | None = Field(None, description="this page, when the result has several")
    pages: int | None = Field(None, description="how many pages, when more than one")


def paging(page: int, pages: int) -> dict[str, int]:
    """`page` / `pages` for an output: none for a result of one page."""
    return {} if pages == 1 else {"page": page, "pages": pages}


Line = Annotated[
    str,
    Field(
        description="as the index writes it: [category] summary, and "
        "(SUPERSEDED by rN.key) when a newer state replaces it"
    ),
]


class IndexOut(Paged):
    text: str = Field(description="the index: `rN: summary` lines, then `rN.key [category] ...`")


class RelationOut(Out):
    type: str = Field(
        description="SUPERSEDES with direction in: a newer state replaces this one (stale)"
    )
    direction: str = Field(description="out: this state -> other; in: other -> this state")
    other: str
    removed: str | None = Field(
        None, description="forgotten or expired: the other end is gone, only its id is left"
    )


class StateOut(Out):
    id: str
    category: str
    summary: str
    content: str
    relations: list[RelationOut] = []
    part: int | None = Field(None, description="a content longer than a page comes in parts")
    parts: int | None = None


class RequestLinesOut(Out):
    id: str
    text: str | None = Field(None, description="what the request asked")
    states: dict[str, Line] = Field(description="its states: id -> line")
    part: int | None = None
    parts: int | None = None


class ObservationOut(Out):
    id: str
    tool: str
    arguments: dict[str, Any] = Field(description="the call's arguments")
    output: str
    is_error: bool = False
    part: int | None = None
    parts: int | None = None


class RevealOut(Paged):
    states: list[StateOut] = []
    requests: list[RequestLinesOut] = Field(
        default_factory=list, description="collapsed requests: their state lines"
    )
    observations: list[ObservationOut] = Field(
        default_factory=list, description="observations at relation ends"
    )
    not_opened: list[str] = Field(
        default_factory=list, description="each id not opened, with the reason"
    )


class SearchOut(Out):
    hits: dict[str, Line] = Field(
        description="states found, best first: id -> line; each may now be opened"
    )


class BeginOut(Paged):
    request_id: str
    handle: str = Field(description="pass it with request_id on every call for this request")
    index: str = Field(description="the index this request begins with (this page of it)")


class RecordOut(Out):
    states: list[str] = Field(description="ids of the states the delta added, changed or removed")
    notices: list[str] = Field(
        default_factory=list,
        description="what changed meanwhile that this request relies on (a state it opened, "
        "superseded by another request): open the newer one before relying on it",
    )


class ObserveOut(Out):
    observation_id: str


class GuardOut(Out):
    decision_id: str | None = Field(None, description="the approval, as stored")


class CommitOut(Out):
    outcome: str
    states_added: list[str] = []
    revealed: list[str] = Field(default_factory=list, description="past states it opened")
    dropped: list[str] = Field(
        default_factory=list, description="references left out: forgotten by others meanwhile"
    )
    error: str | None = None
    already_committed: bool = Field(
        False, description="true when this repeats a commit that had already landed"
    )


class DiscardOut(Out):
    discarded: bool
    already_discarded: bool = Field(
        False, description="the request was discarded before: this call did nothing"
    )


class RememberOut(Out):
    state_id: str = Field(description="the fact's state; its request is the part before the dot")
    already_committed: bool = Field(
        False, description="the same call was stored moments before: this is that request"
    )


class ForgetOut(Out):
    nodes: int = Field(description="nodes deleted")
    relationships: int = Field(description="relationships deleted")
    superseded: dict[str, str] = Field(
        default_factory=dict,
        description="states that stay superseded by a forgotten one (stale, not current again)",
    )
    dependents: dict[str, list[str]] = Field(
        default_factory=dict,
        description="states that lost a relation to a forgotten one, e.g. DEPENDS_ON r3.x",
    )


class WhyOut(Paged):
    text: str = Field(description="the state, what it rests on, their evidence and requests")


class HistoryOut(Paged):
    requests: dict[str, str] = Field(
        description="committed requests, oldest first: id -> finished_at outcome summary"
    )
