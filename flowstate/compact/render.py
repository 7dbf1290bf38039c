"""The front door's answers as the memory tools' results: an output model (a tool's
structured content) and a short text block for the model, cut into pages where long.

    out, text = render.search(fs.search("budget"), "budget")
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
from flowstate.models import Category
from flowstate.models.records import Request
from flowstate.store.search import SearchHit

Result = tuple[s.Out, str]


def history(requests: Sequence[Request], page: int, page_chars: int) -> Result:
    """The committed requests, one line each."""
    lines = [
        {"id": r.id, "line": f"{r.finished_at.isoformat(timespec='seconds')}  {r.outcome.value}  "
         f"{r.summary}"}
        for r in requests
    ]  # fmt: skip
    pages = pack(lines, page_chars) or [[]]
    chosen = _page(pages, page)
    out = s.HistoryOut(requests={x["id"]: x["line"] for x in chosen}, **s.paging(page, len(pages)))
    text = "\n".join(f"{x['id']}  {x['line']}" for x in chosen)
    return out, _footer(text or "no requests yet", page, len(pages))


def line(category: Category, summary: str, superseded_by: str | None, removed: str | None) -> str:
    """A state's line as the index writes it, after its id."""
    mark = f"  (SUPERSEDED by {superseded_by}{f', {removed}' if removed else ''})"
    return f"[{category.value}] {summary}" + (mark if superseded_by else "")


def search(hits: Sequence[SearchHit], query: str) -> Result:
    """Search hits as index lines."""
    found = {h.id: line(h.category, h.summary, h.superseded_by, h.superseder_removed) for h in hits}
    text = "\n".join(f"{k} {v}" for k, v in found.items())
    return s.SearchOut(hits=found), text or f"no state matches {' '.join(words(query)) or query!r}"


def commit(result: RunResult, *, already_committed: bool) -> Result:
    """A committed request."""
    out = s.CommitOut(
        outcome=result.outcome.value,
        states_added=result.states_added,
        revealed=result.revealed,
        dropped=result.dropped,
        error=result.error,
        already_committed=already_committed,
    )
    added = ", ".join(result.states_added) or "no states"
    opened = f"; opened {', '.join(result.revealed)}" if result.revealed else ""
    return out, f"committed {result.request_id} ({result.outcome.value}): {added}{opened}"


def revealed(opened: Opened, page: int, page_chars: int) -> Result:
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
        ).dump()
        for r in opened.states
    ]
    observations = [
        s.ObservationOut(
            id=o.id,
            tool=o.tool,
            arguments=_object(o.arguments),
            output=o.output,
            is_error=o.is_error,
        ).dump()
        for o in opened.observations
    ]
    requests = [
        s.RequestLinesOut(
            id=rid,
            text=opened.request_texts.get(rid),
            states={x.id: line(x.category, x.summary, x.superseded_by, x.superseder_removed)
                    for x in lines},
        ).dump()
        for rid, lines in opened.requests.items()
    ]  # fmt: skip
    pages = pack([*requests, *states, *observations], page_chars, "content", "output", "text")
    chosen = _page(pages or [[]], page)
    n_pages = max(1, len(pages))
    out = s.RevealOut(
        states=[x for x in chosen if "content" in x],
        requests=[x for x in chosen if "states" in x],
        observations=[x for x in chosen if "output" in x],
        not_opened=opened.rejections if page == 1 else [],
        **s.paging(page, n_pages),
    )
    body = json.dumps(out.dump(), indent=1, ensure_ascii=False)
    return out, _footer(body, page, n_pages)


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
