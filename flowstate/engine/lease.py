"""One writer per namespace: the lease an agent holds while one of its requests runs.

    with WriterLease(repo, ttl_s=60):            # NamespaceBusy if another live writer has it
        ...                                      # renewed in the background and at every save
    async with AsyncWriterLease(arepo, ttl_s=60):
        ...

The lease lives on the namespace's counter node, with an expiry on the server's clock. It is
renewed every third of its lifetime in the background (a model or tool call may take longer
than a step): by a thread for the sync lease, by an asyncio task for the async one. It is
renewed, authoritatively, inside the transaction of every draft save and of the commit too:
a writer whose lease was taken over can no longer write anything.
A holder on this host whose process has exited is taken over at once instead of after expiry.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from types import TracebackType

from flowstate.errors import FlowStateError, NamespaceBusy
from flowstate.store import AsyncRepository, Repository
from flowstate.store.namespace_node import writer_id
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan


def take(ops: Ops, owner: str, ttl_s: int) -> Plan[None]:
    """Acquire the lease for `owner`, taking it over from a holder of this host that died."""
    try:
        yield from ops.acquire_lease(owner, ttl_s)
    except NamespaceBusy as busy:
        if not (busy.owner and dead_here(busy.owner)):
            raise
        if not (yield from ops.take_over_lease(busy.owner, owner, ttl_s)):
            yield from ops.acquire_lease(owner, ttl_s)  # someone else was quicker


class WriterLease:
    """Holds `repo`'s namespace for one writer (`owner`) between `__enter__` and `__exit__`."""

    def __init__(self, repo: Repository, ttl_s: int, owner: str | None = None) -> None:
        self.repo = repo
        self.ttl_s = ttl_s
        self.owner = owner or writer_id()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._abandoned = False

    def __enter__(self) -> WriterLease:
        self.repo.run(take(self.repo.ops, self.owner, self.ttl_s))
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

    def abandon(self) -> None:
        """Its holder is gone without leaving (a session dropped without commit or discard):
        stop renewing and give the lease back from the renewal thread, so the namespace is
        not held for the rest of the process. Safe to call from a finalizer."""
        self._abandoned = True
        self._stop.set()

    def _renew(self) -> None:
        while not self._stop.wait(max(1.0, self.ttl_s / 3)):
            # Lost or unreachable: the next draft save or commit says so.
            with contextlib.suppress(FlowStateError):
                self.repo.run(self.repo.ops.renew_lease(self.owner, self.ttl_s))
        if self._abandoned:
            with contextlib.suppress(FlowStateError):  # unreachable: the lease expires
                self.repo.release_lease(self.owner)


class AsyncWriterLease:
    """`WriterLease` for asyncio: the same plans on the async driver, renewed by a task."""

    def __init__(self, repo: AsyncRepository, ttl_s: int, owner: str | None = None) -> None:
        self.repo = repo
        self.ttl_s = ttl_s
        self.owner = owner or writer_id()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> AsyncWriterLease:
        await self.repo.run(take(self.repo.ops, self.owner, self.ttl_s))
        self._task = asyncio.create_task(self._renew(), name="flowstate-lease")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        with contextlib.suppress(FlowStateError):
            await self.repo.run(self.repo.ops.release_lease(self.owner))

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, self.ttl_s / 3))
            with contextlib.suppress(FlowStateError):
                await self.repo.run(self.repo.ops.renew_lease(self.owner, self.ttl_s))


def dead_here(owner: str) -> bool:
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
