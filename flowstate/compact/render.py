"""The front door's answers as the memory tools' results: an output model (a tool's
structured content) and a short text block for the model, cut into pages where long.

    out, text = render.search(fs.search("budget"), "budget", request_id=None)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from flowstate.compact import schemas as s
from flowstate.compact.paging import pack
from flowstate.engine.driver import RunResult
from flowstate.engine.opening import Opened
from flowstate.engine.relevance import words
from flowstate.errors import UsageError
from flowstate.models.records import Request
from flowstate.store.search import SearchHit

Result = tuple[s.Out, str]


def history(requests: Sequence[Request], page: int, page_chars: int) -> Result:
    """The committed requests, one line each."""
    lines = [
        s.HistoryLineOut(
            id=r.id,
            finished_at=r.finished_at.isoformat(timespec="seconds"),
            outcome=r.outcome.value,
            summary=r.summary,
        )
        for r in requests
    ]
    pages = pack([x.model_dump() for x in lines], page_chars) or [[]]
    chosen = _page(pages, page)
    out = s.HistoryOut(requests=chosen, page=page, pages=len(pages))
    text = "\n".join(
        f"{x['id']}  {x['finished_at']}  {x['outcome']}  {x['summary']}" for x in chosen
    )
    return out, _footer(text or "no requests yet", page, len(pages))


def search(hits: Sequence[SearchHit], query: str, request_id: str | None) -> Result:
    """Search hits as index lines."""
    out = s.SearchOut(
        request_id=request_id,
        words=words(query),
        hits=[s.HitOut(**h.model_dump()) for h in hits],
    )
    lines = [
        f"{h.id} [{h.category.value}] {h.summary}"
        + (f"  (SUPERSEDED by {h.superseded_by}" if h.superseded_by else "")
        + (f", {h.superseder_removed}" if h.superseder_removed else "")
        + (")" if h.superseded_by else "")
        for h in hits
    ]
    return out, "\n".join(lines) or f"no state matches {' '.join(out.words) or query!r}"


def commit(result: RunResult, *, already_committed: bool) -> Result:
    """A committed request."""
    out = s.CommitOut(
        request_id=result.request_id,
        outcome=result.outcome.value,
        states_added=result.states_added,
        revealed=result.revealed,
        dropped=result.dropped,
        error=result.error,
        already_committed=already_committed,
    )
    return out, f"committed {result.request_id} ({result.outcome.value}): " + (
        ", ".join(result.states_added) or "no states"
    )


def revealed(opened: Opened, request_id: str | None, page: int, page_chars: int) -> Result:
    """What an opening showed: states with their relations as type and id, collapsed
    requests' lines, observations, and what was not opened (on the first page)."""
    states = [
        s.StateOut(
            id=r.state.id,
            category=r.state.category.value,
            summary=r.state.summary,
            content=r.state.content,
            relations=[
                s.RelationOut(
                    type=x.type, direction=x.direction.value, other=x.other, removed=x.removed
                )
                for x in r.relations
            ],
            superseded_by=r.superseded_by,
        ).model_dump()
        for r in opened.states
    ]
    observations = [
        s.ObservationOut(
            id=o.id,
            tool=o.tool,
            arguments=_object(o.arguments),
            output=o.output,
            is_error=o.is_error,
        ).model_dump()
        for o in opened.observations
    ]
    requests = [
        s.RequestLinesOut(
            id=rid,
            states=[
                s.LineOut(
                    id=x.id,
                    category=x.category.value,
                    summary=x.summary,
                    superseded_by=x.superseded_by,
                    superseder_removed=x.superseder_removed,
                )
                for x in lines
            ],
        ).model_dump()
        for rid, lines in opened.requests.items()
    ]
    pages = pack([*requests, *states, *observations], page_chars, "content", "output")
    chosen = _page(pages or [[]], page)
    out = s.RevealOut(
        request_id=request_id,
        states=[x for x in chosen if "content" in x],
        requests=[x for x in chosen if "states" in x],
        observations=[x for x in chosen if "output" in x],
        not_opened=opened.rejections if page == 1 else [],
        page=page,
        pages=max(1, len(pages)),
    )
    body = json.dumps(out.model_dump(mode="json"), indent=1, ensure_ascii=False)
    return out, _footer(body, page, out.pages)


def _object(arguments: str) -> dict[str, Any]:
    """A tool call's arguments (stored as canonical JSON text) as the object they were."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {"text": arguments}
    return value if isinstance(value, dict) else {"value": value}


def _page(pages: list[list[dict[str, Any]]], page: int) -> list[dict[str, Any]]:
    if not 1 <= page <= len(pages):
        raise UsageError(f"page {page} does not exist: there are {len(pages)} page(s)")
    return pages[page - 1]


def _footer(text: str, page: int, pages: int) -> str:
    if pages <= 1:
        return text
    more = f"call again with page={page + 1} for the rest" if page < pages else "last page"
    return f"{text}\n\n[page {page} of {pages}; {more}]"
