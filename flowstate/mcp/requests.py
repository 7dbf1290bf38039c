"""The requests a server has open. The protocol is stateless, so every call names its request
id; any number of requests may be open in a namespace at once (from this server, other
servers and other writers), each held by the writer that runs it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from flowstate.errors import RequestHeld, UsageError
from flowstate.store.codec import check_id
from flowstate.store.namespace_node import writer_id

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.engine.session import Session


class OpenRequests:
    """This server's open sessions, by request id, each with its idle expiry.

    Calls are serialised by one lock: a session is one request's step sequence, never two
    steps at once. A request left by a server that stopped is picked up by its id once its
    hold has lapsed (a live server's request is never taken from it).
    """

    def __init__(
        self, fs: FlowState, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.fs = fs
        self.repo = fs.repository
        self.ttl_s = ttl_s
        self.lock = threading.RLock()
        self._clock = clock
        self._sessions: dict[str, Session] = {}
        self._touched: dict[str, float] = {}
        self._expired: dict[str, float] = {}  # request ids discarded for idling, and when
        self._discarded: set[str] = set()  # request ids this server discarded when asked
        self.writer = writer_id()  # the name this server discards lapsed requests under

    def begin(self, text: str) -> Session:
        with self.lock:
            self.expire()
            return self._keep(self.fs.begin(text))

    def get(self, request_id: str) -> Session:
        """The open session `request_id`, resumed from its draft when this process has none
        (or, for a request committed meanwhile, a closed session with its result)."""
        from flowstate.engine.session import Session

        check_id("request", request_id)
        with self.lock:
            self.expire()
            session = self._sessions.get(request_id)
            if session is None:
                self._refuse_dropped(request_id)
                # Another writer's live hold refuses it (RequestHeld, naming the holder).
                session = Session.resume(self.repo, request_id)
                if session.closed:  # committed, by a server that stopped before it replied
                    return session
                self._keep(session)
            self._touched[request_id] = self._clock()
            return session

    def discard(self, request_id: str) -> None:
        """Drop an open request: this server's session, or one no live writer holds (the
        library's rule: RequestHeld while another writer runs it). Nothing of it is kept."""
        check_id("request", request_id)
        with self.lock:
            session = self._sessions.get(request_id)
            if session is None:
                self._refuse_dropped(request_id)
                self.fs.discard(request_id)
            elif session.closed:
                raise UsageError(f"request {request_id} is already committed")
            else:
                session.discard()
            self.close(request_id, discarded=True)

    def sessions(self) -> list[Session]:
        """The sessions open in this server now."""
        with self.lock:
            return list(self._sessions.values())

    def close(self, request_id: str, *, discarded: bool = False) -> None:
        """Forget the session after its commit or discard (or a failed step that closed it)."""
        with self.lock:
            if discarded:
                self._discarded.add(request_id)
            self._sessions.pop(request_id, None)
            self._touched.pop(request_id, None)

    def expire(self) -> list[str]:
        """Discard the requests nobody touched for `ttl_s`: this server's idle sessions, and
        requests whose hold lapsed (their writer stopped) and whose draft was last saved that
        long ago by the database's clock. Their ids."""
        with self.lock:
            now = self._clock()
            gone = []
            for rid, session in list(self._sessions.items()):
                if session.closed:  # committed or discarded by a call that then failed
                    self.close(rid)
                elif now - self._touched[rid] >= self.ttl_s:
                    self.close(rid)
                    self._expired[rid] = now
                    gone.append(session.discard() or rid)
            if self.repo.read_only:
                return gone
            for left in self.repo.open_requests():
                if left.held or left.idle_s < self.ttl_s or left.request_id in self._sessions:
                    continue
                try:  # only while still lapsed: the check is made again in the delete
                    self.repo.discard_draft(left.request_id, owner=self.writer)
                except RequestHeld:
                    continue  # picked up meanwhile
                self._expired[left.request_id] = now
                gone.append(left.request_id)
            return gone

    def shutdown(self) -> None:
        """Let this server's holds lapse; the drafts stay for the next server to pick up."""
        with self.lock:
            for rid, session in list(self._sessions.items()):
                self.close(rid)
                session.__exit__(None, None, None)

    def _refuse_dropped(self, request_id: str) -> None:
        """A request this server discarded is said to be so, not merely "not open"."""
        if request_id in self._discarded:
            raise UsageError(
                f"request {request_id} was discarded; nothing of it was committed: "
                "memory_begin a new one"
            )
        if request_id in self._expired:
            raise UsageError(
                f"request {request_id} was discarded after {self.ttl_s:g} s without a call "
                "(the server's --draft-ttl); nothing of it was committed: memory_begin again"
            )

    def _keep(self, session: Session) -> Session:
        self._sessions[session.request_id] = session
        self._touched[session.request_id] = self._clock()
        return session
