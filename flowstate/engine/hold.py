"""The hold a writer keeps on the request it runs.

    with RequestHold(repo, "r7", owner, hold_s=60):     # renewed in the background
        ...                                             # and at every draft save
    async with AsyncRequestHold(arepo, "r7", owner, hold_s=60):
        ...

A request's draft names the writer that holds it and until when, on the server's clock
(`flowstate.store.holds`). Beginning a request (its first draft save) or taking one over takes
the hold; this keeps it alive between saves, since a model or tool call may take longer than
a step: by a thread for the sync hold, by an asyncio task for the async one. Leaving the block
lets the hold lapse at once, so another writer may resume or discard the request without
waiting (a committed or discarded request has no draft left to hold).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from types import TracebackType

from flowstate.errors import FlowStateError
from flowstate.store import AsyncRepository, Repository


class RequestHold:
    """Keeps `owner`'s hold on `request_id` between `__enter__` and `__exit__`."""

    def __init__(self, repo: Repository, request_id: str, owner: str, hold_s: int) -> None:
        self.repo, self.request_id, self.owner, self.hold_s = repo, request_id, owner, hold_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> RequestHold:
        self._stop.clear()
        self._thread = threading.Thread(target=self._renew, name="flowstate-hold", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        with contextlib.suppress(FlowStateError):  # the database is gone: the hold lapses
            self.repo.run(self.repo.ops.release_hold(self.request_id, self.owner))

    def stop(self) -> None:
        """Stop renewing (the hold then lapses on its own)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _renew(self) -> None:
        while not self._stop.wait(max(1.0, self.hold_s / 3)):
            # Lost or unreachable: the next draft save or the commit says so.
            with contextlib.suppress(FlowStateError):
                self.repo.run(self.repo.ops.renew_hold(self.request_id, self.owner, self.hold_s))


class AsyncRequestHold:
    """`RequestHold` for asyncio: the same plans on the async driver, renewed by a task."""

    def __init__(self, repo: AsyncRepository, request_id: str, owner: str, hold_s: int) -> None:
        self.repo, self.request_id, self.owner, self.hold_s = repo, request_id, owner, hold_s
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> AsyncRequestHold:
        self._task = asyncio.create_task(self._renew(), name="flowstate-hold")
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
            await self.repo.run(self.repo.ops.release_hold(self.request_id, self.owner))

    async def _renew(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, self.hold_s / 3))
            with contextlib.suppress(FlowStateError):
                await self.repo.run(
                    self.repo.ops.renew_hold(self.request_id, self.owner, self.hold_s)
                )


def dead_here(owner: str | None) -> bool:
    """Whether `owner` (host:pid:tag) names a process of this host that has exited: its
    requests may be taken over at once instead of after their holds lapse."""
    parts = (owner or "").rsplit(":", 2)
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
