"""One writer per namespace: the lease an agent holds while one of its requests runs.

    with WriterLease(repo, ttl_s=60):      # NamespaceBusy if another live writer has it
        ...                                # renewed in the background and at every draft save

The lease lives on the namespace's counter node, with an expiry on the server's clock. It is
renewed every third of its lifetime by a background thread (a model or tool call may take
longer than a step) and, authoritatively, inside the transaction of every draft save and of
the commit: a writer whose lease was taken over can no longer write anything.
A holder on this host whose process has exited is taken over at once instead of after expiry.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from types import TracebackType

from flowstate.errors import FlowStateError, NamespaceBusy
from flowstate.store import Repository
from flowstate.store.namespace_node import writer_id


class WriterLease:
    """Holds `repo`'s namespace for one writer (`owner`) between `__enter__` and `__exit__`."""

    def __init__(self, repo: Repository, ttl_s: int, owner: str | None = None) -> None:
        self.repo = repo
        self.ttl_s = ttl_s
        self.owner = owner or writer_id()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> WriterLease:
        try:
            self.repo.acquire_lease(self.owner, self.ttl_s)
        except NamespaceBusy as busy:
            if not (busy.owner and _dead_here(busy.owner)):
                raise
            if not self.repo.take_over_lease(busy.owner, self.owner, self.ttl_s):
                self.repo.acquire_lease(self.owner, self.ttl_s)  # someone else was quicker
        self._stop.clear()
        self._thread = threading.Thread(target=self._renew, name="flowstate-lease", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(FlowStateError):  # the database is gone: the lease expires
            self.repo.release_lease(self.owner)

    def _renew(self) -> None:
        while not self._stop.wait(max(1.0, self.ttl_s / 3)):
            # Lost or unreachable: the next draft save or commit says so.
            with contextlib.suppress(FlowStateError):
                self.repo.acquire_lease(self.owner, self.ttl_s)


def _dead_here(owner: str) -> bool:
    """Whether `owner` (host:pid:tag) names a process of this host that has exited."""
    parts = owner.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    host, pid = parts[0], int(parts[1])
    if host != socket.gethostname() or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # alive, owned by another user
    return False
