"""Who runs which request: the hold a writer has on an open request's draft.

Many requests may be open in one namespace at once, each with its own draft. The writer that
began (or took over) a request holds it: only the holder saves its draft, commits or discards
it. A hold lasts on the server's clock until it is renewed (every save renews it, and a running
request renews it in the background) or released; once it has lapsed, any writer may take the
request over, to resume or discard it. Commits are serialised by Neo4j (a write lock on the
namespace's counter node, inside the commit statement).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from flowstate.errors import RequestHeld
from flowstate.store.plans import Row

DEFAULT_HOLD_S = 60  # how long a hold lasts unless renewed (it is, at every step)


class OpenRequest(BaseModel):
    """A request begun and not yet committed or discarded: running, or interrupted."""

    model_config = ConfigDict(frozen=True)

    request_id: str
    holder: str | None  # the writer that runs it (or ran it last), host:pid:tag
    expires: datetime | None  # when the hold lapses unless renewed
    held: bool  # a live writer holds it now; False: anyone may resume or discard it
    created_at: datetime | None
    updated_at: datetime | None
    idle_s: int  # seconds since its draft was last saved (server clock)
    payload: str  # the serialized active state, as last saved

    @property
    def steps(self) -> int | None:
        """How many steps were done, read from the draft without loading it whole."""
        from flowstate.store.drafts import field_of

        step = field_of(self.payload, "step")
        return step if isinstance(step, int) else None

    @property
    def handle_hash(self) -> str | None:
        """The hash of the handle of the client that holds it (None: an agent's request)."""
        from flowstate.store.drafts import field_of

        digest = field_of(self.payload, "handle_hash")
        return digest if isinstance(digest, str) else None

    @property
    def text(self) -> str:
        from flowstate.store.drafts import field_of

        text = field_of(self.payload, "text")
        return text if isinstance(text, str) else ""


def open_request_of(row: Row) -> OpenRequest:
    return OpenRequest(
        request_id=row["request_id"],
        holder=row["holder"],
        expires=_native(row["expires"]),
        held=bool(row["held"]),
        created_at=_native(row["created_at"]),
        updated_at=_native(row["updated_at"]),
        idle_s=int(row["idle_s"] or 0),
        payload=row["payload"] or "{}",
    )


def held_by_other(namespace: str, request_id: str, row: Row | None, action: str) -> RequestHeld:
    """The refusal when `row` (a hold check's answer) says another writer has the request, or
    (no row) that its draft is gone."""
    if row is None:
        return RequestHeld(
            f"cannot {action} {request_id} of namespace {namespace!r}: it is not open (another "
            "writer committed or discarded it, or it never began). Nothing was written",
            request_id=request_id,
        )
    holder, expires = row["holder"], _native(row["expires"])
    until = f" until {expires:%Y-%m-%d %H:%M:%S} UTC" if expires else ""
    return RequestHeld(
        f"cannot {action} {request_id} of namespace {namespace!r}: writer {holder} holds it"
        f"{until} (it runs it now, or took it over). Nothing was written; resume or discard it "
        "once its hold has lapsed",
        request_id=request_id,
        owner=holder,
        expires=expires,
    )


def _native(value: object) -> datetime | None:
    if value is None:
        return None
    to_native = getattr(value, "to_native", None)
    native = to_native() if to_native else value
    return native if isinstance(native, datetime) else None
