"""The server's memory, connected in the background: the server answers `initialize` at once
(a host gives up on a server that takes seconds), and a tool call that comes while Neo4j is
still being reached or started waits for it (the server tells the host how it goes), then
says so if it must."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from flowstate.errors import FlowStateError, StoreUnavailable

if TYPE_CHECKING:
    from flowstate.api import FlowState

Say = Callable[[str], None]
Opener = Callable[[Say], "FlowState"]
Warmer = Callable[["FlowState"], int]

# How long a tool call waits for a connection under way before it says "not ready yet": the
# managed local Neo4j starts within it on a loaded machine, and hosts built on the TypeScript
# SDK give up on a call at 60 s.
WAIT_S = 45.0
# After an attempt failed, how long a call waits for the next one: a server that is down or
# never answers is said at once, not waited out at every call.
RETRY_WAIT_S = 1.5
# How long closing waits for the warm-up's call under way (it stops before its next one).
CLOSE_WAIT_S = 5.0


class NotReady(StoreUnavailable):
    """Neo4j is still being reached or started; nothing of the call was applied."""


class Memory:
    """One namespace's `FlowState` (which keeps the requests its hosts have open), made by
    `open_fs` in a thread."""

    def __init__(self, open_fs: Opener, say: Say) -> None:
        self._open_fs = open_fs
        self._say = say
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._fs: FlowState | None = None
        self._error: FlowStateError | None = None
        self._phase = "connecting to Neo4j"
        self._since = time.monotonic()
        self._thread: threading.Thread | None = None
        self._failed = ""  # why the last attempt failed, until one succeeds
        # Run once connected, beside the first calls (`flowstate.mcp.warmup`): how many tool
        # calls it rehearsed.
        self.warm: Warmer | None = None
        # Set by `close`: the warm-up stops at its next call, before the driver closes.
        self.closing = threading.Event()

    @classmethod
    def of(cls, fs: FlowState) -> Memory:
        """A memory connected already, to `fs` (which its caller closes)."""
        memory = cls(lambda say: fs, lambda message: None)
        memory._fs = fs
        memory._ready.set()
        return memory

    def start(self) -> None:
        """Begin connecting (or starting the managed Neo4j) in the background."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._ready.clear()
            self._error, self._since = None, time.monotonic()
            self._phase = "connecting to Neo4j"
            self._thread = threading.Thread(target=self._connect, name="flowstate-connect")
            self._thread.daemon = True
            self._thread.start()

    def get(self, wait_s: float = WAIT_S) -> FlowState:
        """The connected memory; `NotReady` while it is being reached, the connection's error
        when it failed (and a new attempt is begun for the next call)."""
        if not self._ready.wait(min(wait_s, RETRY_WAIT_S) if self._failed else wait_s):
            raise self.not_ready()
        if self._error is not None:
            error = self._error
            self.start()  # the database may be back by the next call
            raise type(error)(f"{error} (trying again now: send the call again shortly)")
        assert self._fs is not None
        return self._fs

    def not_ready(self) -> NotReady:
        """What a call that cannot wait longer is told: what is under way, and why the last
        attempt failed, if one did."""
        waited = time.monotonic() - self._since
        failed = f"{self._failed}; trying again: " if self._failed else ""
        return NotReady(
            f"the memory is not ready yet: {failed}{self._phase} ({waited:.0f} s so far). "
            "Nothing was applied: send the same call again in a few seconds"
        )

    def wait(self, seconds: float) -> bool:
        """Wait up to `seconds` for the attempt under way to end (connected or failed); a
        call after a failed attempt waits `RETRY_WAIT_S` at most in all."""
        return self._ready.wait(min(seconds, RETRY_WAIT_S) if self._failed else seconds)

    @property
    def failed(self) -> str:
        """Why the last attempt failed ("" once one succeeded, or none ended yet)."""
        return self._failed

    @property
    def phase(self) -> str:
        """What the attempt under way is doing (`connecting to Neo4j`, `warming up`, ...)."""
        return self._phase

    def ready(self) -> FlowState | None:
        """The memory if it is connected (no waiting)."""
        return self._fs if self._ready.is_set() and self._error is None else None

    def close(self) -> None:
        """Let the open requests' holds go (their drafts stay for the next server) and
        disconnect, once the warm-up (which shares the driver) has stopped."""
        self.closing.set()
        if self._thread is not None:
            self._thread.join(timeout=CLOSE_WAIT_S)
        if self._fs is None:
            return
        try:
            self._fs.close()
        except Exception as e:  # the server is stopping: said in one line, not a traceback
            self._say(f"closing the memory: {type(e).__name__}: {e}")

    def _phase_said(self, message: str) -> None:
        self._phase = message.rstrip(".")
        self._say(message)

    def _connect(self) -> None:
        try:
            fs = self._open_fs(self._phase_said)
            if self.warm is None:  # else the warm-up loads them, after the host's calls
                self._phase = "reading the index"
                fs.shown_index()  # loads the index and the tokenizer before the first call
            self._fs, self._failed = fs, ""
            self._say(f"connected: namespace {fs.namespace!r} ready")
        except FlowStateError as e:
            self._error, self._failed = e, str(e)
            self._say(f"cannot open the memory: {e}")
        except Exception as e:  # never leave a call waiting on a thread that died
            self._error = StoreUnavailable(f"cannot open the memory: {type(e).__name__}: {e}")
            self._failed = str(self._error)
            self._say(str(self._error))
        finally:
            self._ready.set()
        if self._fs is not None and self.warm is not None:
            self._warm_up(self._fs, self.warm)

    def _warm_up(self, fs: FlowState, warm: Warmer) -> None:
        """After the calls are let through: the warm-up takes its turn between them, so a
        call waits at most for one rehearsed call (see `flowstate.mcp.warmup`)."""
        began = time.monotonic()
        try:
            calls = warm(fs)
        except Exception as e:  # a bug of the warm-up must not keep the memory shut
            self._say(f"warm-up skipped: {type(e).__name__}: {e}")
            return
        self._say(f"warmed up: {calls} calls rehearsed in {time.monotonic() - began:.1f} s")
