"""The requests a front door handed out, kept open for their clients until they end.

    session = fs.begin("Book the hotel")           # kept here; session.handle goes to the client
    fs.session(session.request_id, handle)         # a later call: the same session
    fs.expire(idle_s=1800)                         # a server's sweep: idle ones are discarded

A client holds a request by its handle (`flowstate.engine.handles`): the front door finds the
session by id and refuses a call whose handle is not the request's. What ended here
(committed, discarded, expired) is remembered for a while, so that the client's late call is
told what became of its request, not merely that it is not open. Bookkeeping only: the front
doors pick requests up from their drafts and discard them.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from enum import Enum
from typing import Generic, TypeVar

from flowstate.engine.handles import matches, refusal
from flowstate.engine.session_core import SessionCore
from flowstate.errors import RequestEnded, RequestHeld, UsageError
from flowstate.store.codec import check_id
from flowstate.store.holds import OpenRequest

S = TypeVar("S", bound=SessionCore)  # type: ignore[type-arg]

REMEMBERED_ENDS = 10_000  # ended requests whose end is still told to their client


class Ending(Enum):
    DISCARDED = "was discarded; nothing of it was committed: begin a new one"
    EXPIRED = "was discarded after {idle} without a call; nothing of it was committed: begin again"


class Lifetimes(Generic[S]):
    """The open sessions of one front door, by request id, with when each was last used."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.RLock()  # a server's sweep runs beside its calls
        self._open: dict[str, S] = {}
        self._used: dict[str, float] = {}
        self._ended: OrderedDict[str, tuple[Ending, str, str | None]] = OrderedDict()

    def keep(self, session: S) -> S:
        with self._lock:
            self._open[session.request_id] = session
            self._used[session.request_id] = self._clock()
            self._ended.pop(session.request_id, None)
            return session

    def find(self, request_id: str, handle: str) -> S | None:
        """The session `request_id` when it is open here and `handle` is its (WrongHandle when
        it is not); None when this front door does not hold it (pick it up from its draft).
        A request that ended here is told so to its own client."""
        check_id("request", request_id)
        if not isinstance(handle, str) or not handle:  # never the operator's take-over
            raise refusal(request_id)
        with self._lock:
            session = self._open.get(request_id)
            if session is not None and not session.held:
                self._forget(request_id)  # committed, discarded or let go: not held here
                session = None
            if session is not None:
                if not matches(handle, session.active.handle_hash):
                    raise refusal(request_id)
                self._used[request_id] = self._clock()
                return session
            ended = self._ended.get(request_id)
            if ended is not None and matches(handle, ended[2]):
                raise RequestEnded(f"request {request_id} {ended[1]}", ended[0].name.lower())
            return None

    def held_here(self, request_id: str) -> bool:
        """Whether a session of this front door holds `request_id` now."""
        with self._lock:
            session = self._open.get(request_id)
            return session is not None and session.held

    def refuse_operator(self, request_id: str | None, verb: str) -> None:
        """An operator's `verb` (no handle) never takes a request from a client of this front
        door: RequestHeld when one holds it."""
        if request_id is not None and self.held_here(request_id):
            raise RequestHeld(
                f"cannot {verb} {request_id}: a session of this process holds it; its client "
                "acts on it with its handle",
                request_id=request_id,
            )

    def lapsed(self, pending: list[OpenRequest], idle_s: float) -> list[OpenRequest]:
        """Of the namespace's open requests, those no live writer holds and nobody saved for
        `idle_s` seconds (by the database's clock): a sweep discards them."""
        return [
            r
            for r in pending
            if not r.held and r.idle_s >= idle_s and not self.held_here(r.request_id)
        ]

    def end(self, request_id: str, handle_hash: str | None, how: Ending, idle_s: float = 0) -> None:
        """Stop keeping `request_id`, remembering how it ended for its client."""
        with self._lock:
            self._forget(request_id)
            self._ended[request_id] = (how, how.value.format(idle=f"{idle_s:g} s"), handle_hash)
            while len(self._ended) > REMEMBERED_ENDS:
                self._ended.popitem(last=False)

    def idle(self, idle_s: float) -> list[S]:
        """The sessions nobody used for `idle_s` seconds or more, by a lookup here or a call
        of their own (no longer kept)."""
        if isinstance(idle_s, bool) or not isinstance(idle_s, int | float) or not idle_s > 0:
            raise UsageError(f"idle_s must be a positive number of seconds, not {idle_s!r}")
        with self._lock:
            now = self._clock()
            gone = [
                s
                for rid, s in self._open.items()
                if now - max(self._used[rid], s.used_at) >= idle_s
            ]
            for session in gone:
                self._forget(session.request_id)
            return gone

    def sessions(self) -> list[S]:
        """The sessions kept open now."""
        with self._lock:
            return [s for s in self._open.values() if s.held]

    def release_all(self) -> list[S]:
        """Every kept session, no longer kept (the front door lets their holds go)."""
        with self._lock:
            kept = list(self._open.values())
            self._open.clear()
            self._used.clear()
            return kept

    def _forget(self, request_id: str) -> None:
        self._open.pop(request_id, None)
        self._used.pop(request_id, None)
