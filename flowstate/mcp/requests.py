"""The request a server has open. The protocol is stateless, so every call names its request
id; one writer per namespace means at most one request is open at a time."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from flowstate.errors import UsageError
from flowstate.store.codec import check_id

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.engine.session import Session
    from flowstate.store.namespace_node import DraftAge


class OpenRequest:
    """The open request (if any) of the server's namespace, with its idle expiry.

    Calls are serialised by one lock: a session is one request's step sequence, never two
    steps at once. A draft left by a server that stopped is picked up by its id. Idleness is
    timed by this server for its own request, and for another's by the draft's last save on
    the database's clock, and never while a live writer holds the namespace.
    """

    def __init__(
        self, fs: FlowState, ttl_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.fs = fs
        self.repo = fs.repository
        self.ttl_s = ttl_s
        self.lock = threading.RLock()
        self._clock = clock
        self._session: Session | None = None
        self._touched = clock()
        self._expired: dict[str, float] = {}  # request ids discarded for idling, and when
        self._discarded: set[str] = set()  # request ids this server discarded when asked

    def begin(self, text: str) -> Session:
        with self.lock:
            self._expire_own()
            if self._session is not None:
                raise UsageError(
                    f"request {self._session.request_id} is open: memory_commit or "
                    "memory_discard it first (one request at a time per namespace)"
                )
            age = self.repo.draft_age()
            if age is not None:
                raise UsageError(_open_elsewhere(age))
            return self._keep(self.fs.begin(text))

    def get(self, request_id: str) -> Session:
        """The open session `request_id`, resumed from its draft when this process has none
        (or, for a request committed meanwhile, a closed session with its result)."""
        from flowstate.engine.session import Session

        check_id("request", request_id)
        with self.lock:
            self._expire_own()
            session = self._session
            if session is None:
                if request_id in self._discarded:
                    raise UsageError(
                        f"request {request_id} was discarded; nothing of it was committed: "
                        "memory_begin a new one"
                    )
                if request_id in self._expired:
                    raise UsageError(
                        f"request {request_id} was discarded after {self.ttl_s:g} s without a "
                        "call (the server's --draft-ttl); nothing of it was committed: "
                        "memory_begin again"
                    )
                session = Session.resume(self.repo, request_id)
                if session.closed:  # committed, by a server that stopped before it replied
                    return session
                self._keep(session)
            elif session.request_id != request_id:
                raise UsageError(
                    f"request {request_id} is not open; the open request is {session.request_id}"
                )
            self._touched = self._clock()
            return session

    def current(self) -> Session | None:
        """The open request of this server, if any (no database call)."""
        with self.lock:
            self._expire_own()
            return self._session

    def close(self, request_id: str, *, discarded: bool = False) -> None:
        """Forget the session after its commit or discard (or a failed step that closed it)."""
        with self.lock:
            if discarded:
                self._discarded.add(request_id)
            if self._session is not None and self._session.request_id == request_id:
                self._session = None

    def expire(self) -> str | None:
        """Discard an open request nobody touched for `ttl_s`: this server's own, or one whose
        draft was last saved `ttl_s` ago while no live writer holds the namespace (its server
        stopped); its id if one was discarded."""
        from flowstate.engine.session import Session

        with self.lock:
            own = self._expire_own()
            if own is not None or self._session is not None or self.repo.read_only:
                return own
            age = self.repo.draft_age()
            if age is None or _live(age) or age.idle_s < self.ttl_s:
                return None
            self._expired[age.request_id] = self._clock()
            return Session.resume(self.repo, age.request_id).discard()

    def shutdown(self) -> None:
        """Release the lease; the draft stays for the next server to pick up."""
        with self.lock:
            if self._session is not None:
                session, self._session = self._session, None
                session.__exit__(None, None, None)

    def _expire_own(self) -> str | None:
        if self._session is not None and self._session.closed:
            self._session = None  # committed or discarded by a call that then failed
        if self._session is None or self._clock() - self._touched < self.ttl_s:
            return None
        session, self._session = self._session, None
        self._expired[session.request_id] = self._clock()
        return session.discard()

    def _keep(self, session: Session) -> Session:
        self._session, self._touched = session, self._clock()
        return session


def _live(age: DraftAge) -> bool:
    """Whether a live writer (not a process of this host that exited) holds the namespace."""
    from flowstate.engine.lease import dead_here

    return age.lease is not None and not dead_here(age.lease.owner)


def _open_elsewhere(age: DraftAge) -> str:
    rid = age.request_id
    if age.lease is not None and _live(age):
        return (
            f"request {rid} is open in another server: writer {age.lease.owner} holds this "
            f"namespace until {age.lease.expires:%Y-%m-%d %H:%M:%S} UTC and renews that while "
            f"it runs (its last step was saved {age.idle_s} s ago). Wait until it commits or "
            f"discards {rid}; if that server has stopped, its hold ends then and any call with "
            f"request_id {rid} picks the request up here"
        )
    return (
        f"request {rid} was left open by a server that stopped (its last step was saved "
        f"{age.idle_s} s ago): memory_commit or memory_discard it (request_id {rid}) first; any "
        "call with its id picks it up where it was"
    )
