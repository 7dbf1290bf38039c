"""The request a server has open. The protocol is stateless, so every call names its request
id; one writer per namespace means at most one request is open at a time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from flowstate.engine.session import Session
from flowstate.errors import UsageError
from flowstate.store import Repository
from flowstate.store.codec import check_id


class OpenRequest:
    """The open request (if any) of the server's namespace, with its idle expiry.

    Calls are serialised by one lock: a session is one request's step sequence, never two
    steps at once. A draft left by a server that stopped is picked up by its id.
    """

    def __init__(
        self, repo: Repository, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.repo = repo
        self.ttl_s = ttl_s
        self.lock = threading.RLock()
        self._clock = clock
        self._session: Session | None = None
        self._touched = clock()
        self._orphan: tuple[str, float] | None = None  # a stopped server's draft, first seen
        self._expired: dict[str, float] = {}  # request ids discarded for idling, and when

    def begin(self, text: str) -> Session:
        with self.lock:
            self.expire()
            if self._session is not None:
                raise UsageError(
                    f"request {self._session.request_id} is open: memory_commit or "
                    "memory_discard it first (one request at a time per namespace)"
                )
            draft = self.repo.load_draft()
            if draft is not None:  # left by a server that stopped
                raise UsageError(
                    f"request {draft[0]} was left open by a server that stopped: "
                    f"memory_commit or memory_discard it (request_id {draft[0]}) first; any "
                    "call with its id picks it up where it was"
                )
            return self._keep(Session.start(self.repo, text))

    def get(self, request_id: str) -> Session:
        """The open session `request_id`, resumed from its draft when this process has none."""
        check_id("request", request_id)
        with self.lock:
            self.expire()
            session = self._session
            if session is None:
                if request_id in self._expired:
                    raise UsageError(
                        f"request {request_id} was discarded after {self.ttl_s:g} s without a "
                        "call (the server's --draft-ttl); nothing of it was committed: "
                        "memory_begin again"
                    )
                session = Session.resume(self.repo, request_id)
                if session.closed:  # its commit, cut by the stop, was finished on pick-up
                    return session
                self._keep(session)
            elif session.request_id != request_id:
                raise UsageError(
                    f"request {request_id} is not open; the open request is {session.request_id}"
                )
            self._touched = self._clock()
            return session

    def current(self) -> Session | None:
        with self.lock:
            self.expire()
            return self._session

    def close(self, request_id: str) -> None:
        """Forget the session after its commit or discard (or a failed step that closed it)."""
        with self.lock:
            if self._session is not None and self._session.request_id == request_id:
                self._session = None

    def expire(self) -> str | None:
        """Discard the open request if nobody touched it for `ttl_s`; its id if so. A draft
        of a stopped server counts as touched when this one first saw it."""
        with self.lock:
            now = self._clock()
            if self._session is not None and self._session.closed:
                self._session = None  # committed or discarded by a call that then failed
            if self._session is not None:
                if now - self._touched < self.ttl_s:
                    return None
                session, self._session = self._session, None
                self._expired[session.request_id] = now
                return session.discard()
            draft = self.repo.load_draft() if not self.repo.read_only else None
            if draft is None:
                self._orphan = None
                return None
            if self._orphan is None or self._orphan[0] != draft[0]:
                self._orphan = (draft[0], now)
                return None
            if now - self._orphan[1] < self.ttl_s:
                return None
            self._orphan = None
            self._expired[draft[0]] = now
            return Session.resume(self.repo, draft[0]).discard()

    def shutdown(self) -> None:
        """Release the lease; the draft stays for the next server to pick up."""
        with self.lock:
            if self._session is not None:
                session, self._session = self._session, None
                session.__exit__(None, None, None)

    def _keep(self, session: Session) -> Session:
        self._session, self._touched, self._orphan = session, self._clock(), None
        return session
