"""Memory for someone else's loop: the host's model emits deltas and accesses, FlowState checks
and stores them, and spends no model call of its own.

A session is one request. Each call is one step fed to the same step driver the agents run
(`flowstate.engine.driver`), so the ISU and PSA rules, atomic deltas, the write-ahead draft
and the commit are exactly the agent loop's:

    session = fs.begin("Book the hotel we talked about")
    print(session.index())                       # what the host's model should see first
    session.reveal(["r2.budget"])                # PSA: shown ids only, at most K per call
    session.record([{"op": "add", "key": "hotel", "category": "decision", ...}])
    oid = session.observe("search_hotels", {"city": "Lisbon"}, "[...]")
    session.commit("Booked Casa Azul", "Hotel booked in Lisbon")

Each call is written once, as steps (`flowstate.engine.session_core`); `Session` runs them on
the sync driver, `AsyncSession` (`flowstate.engine.async_session`) on the async one.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from flowstate.engine.driver import Approve, RunResult, Start, approver_outcome
from flowstate.engine.hold import RequestHold
from flowstate.engine.index import HistoricalIndex
from flowstate.engine.opening import Opened
from flowstate.engine.request_plans import RequestPlans
from flowstate.engine.session_core import (
    Guarded,
    Recorded,
    SessionCore,
    Steps,
    claim,
    host_agent,
    pickup_plan,
)
from flowstate.engine.step import AgentConfig, Approval
from flowstate.models.active import ActiveState
from flowstate.safety.redaction import Redactor
from flowstate.store.namespace_node import Stamp
from flowstate.store.plans import drive
from flowstate.store.repository import Repository

# What a session's calls answer with, named here for its callers (the shells).
__all__ = ["Guarded", "Recorded", "Session"]

T = TypeVar("T")


def _let_go(hold: RequestHold) -> None:
    """Release a dropped session's hold off the collector's thread (a database call there
    could stall whatever code the collection interrupted)."""
    with contextlib.suppress(RuntimeError):  # interpreter shutdown: the hold lapses instead
        threading.Thread(target=hold.__exit__, args=(None, None, None), daemon=True).start()


class Session(SessionCore[Repository]):
    """One request driven by a host. Build it with `FlowState.begin` (or `FlowState.resume`)."""

    def __init__(self, agent: RequestPlans[Repository], active: ActiveState) -> None:
        """Holds the request (renewed in the background) until it is closed or left."""
        super().__init__(agent, active)
        self._calls = threading.RLock()
        hold = RequestHold(agent.repo, active.request_id, agent.writer, agent.config.hold_seconds)
        self._hold: RequestHold | None = hold.__enter__()
        # Dropped without commit, discard or leaving its block: when it is collected its hold
        # is let go, so another writer may pick the request up at once.
        self._abandon = weakref.finalize(self, _let_go, hold)

    @classmethod
    def start(
        cls,
        repo: Repository,
        text: str,
        *,
        config: AgentConfig | None = None,
        approve: Callable[[Approval], Any] | None = None,
        redact: Redactor[Any] | None = None,
        index: tuple[HistoricalIndex, Stamp] | None = None,
    ) -> Session:
        """Begin a request in `repo`'s namespace, held by this session (and renewed) until it
        is committed, discarded or left; its first draft is saved. Other requests may run in
        the namespace at the same time. `index` is the namespace's index as loaded at a stamp
        (brought up to date here), else it is loaded."""
        agent = host_agent(repo, config, approve, redact, index)
        active = repo.run(agent.begin_plan(text))
        handle = claim(active)  # before the first draft save, which keeps its hash
        session = cls(agent, active)
        session.handle = handle
        try:
            session._run(session._open(Start.NEW))
        except BaseException:
            session._release()
            raise
        return session

    @classmethod
    def resume(
        cls,
        repo: Repository,
        request_id: str,
        *,
        handle: str | None = None,
        config: AgentConfig | None = None,
        approve: Callable[[Approval], Any] | None = None,
        redact: Redactor[Any] | None = None,
    ) -> Session:
        """Pick the open request `request_id` up from its saved draft (after the process that
        drove it stopped, e.g. a restarted MCP server), holding it: RequestHeld while another
        live writer holds it. With `handle`, only the request that handle holds (WrongHandle
        otherwise); without, an operator's take-over: the session gets a new handle and
        `taken_over_from` names the writer that held it. A step the process was in the middle
        of is finished as an agent's `resume()` finishes it. A request committed by a process
        that stopped before it could say so comes back closed: the host's retried commit gets
        its result."""
        agent = host_agent(repo, config, approve, redact)
        active, result, holder = repo.run(pickup_plan(agent, request_id, handle))
        session = cls(agent, active)
        session._adopt(handle, holder, result)
        try:
            if result is None:
                session._run(session._pick_up())
        except BaseException:
            session._release()
            raise
        session._picked_up(result)
        if session.closed:
            session._release()
        return session

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        """Leaving the block without a commit keeps the draft (resume or discard it later,
        from here or from another process: its hold lapses now)."""
        self._release()

    def index(self) -> str:
        """The Historical State Index, exactly as an agent's prompt shows it (brought up to
        date first: others may have committed since)."""
        return self._run(self._index())

    def record(self, delta: Sequence[dict[str, Any]]) -> Recorded:
        """Add, update or remove states of this request: all of the delta or none of it."""
        return self._run(self._record(delta))

    def reveal(self, ids: Sequence[str]) -> Opened:
        """Open past states (or collapsed requests) that were shown: their content and their
        relations as type + id. The far ends open only when asked for in a later call."""
        return self._run(self._reveal(ids))

    def shown(self, state_ids: Sequence[str]) -> None:
        """Count `state_ids` as shown to the host's model (a search listed them), so that it
        may open them like index lines; saved in the request's draft at once."""
        self._run(self._shown(state_ids))

    def observe(
        self, tool: str, arguments: dict[str, Any], output: str, *, is_error: bool = False
    ) -> str:
        """Keep a raw tool result the host got, so that states can cite it as evidence;
        returns its id (e.g. `r7.o2`). Uncited observations are not committed."""
        return self._run(self._observe(tool, arguments, output, is_error))

    def guard(self, tool: str, arguments: dict[str, Any], cites: Sequence[str]) -> Guarded:
        """FlowState's rule for a consequential action: it must cite states of this request or
        revealed ones, none of them superseded (and the approver, if any, must say True).
        The decision is recorded either way; the host then runs the call itself."""
        return self._run(self._guard(tool, arguments, cites))

    def commit(self, answer: str, summary: str = "") -> RunResult:
        """End the request: commit its states, relations, cited observations and decisions in
        one transaction. When the database fails during the commit, the request's end is
        kept: `commit` again commits that end (never twice)."""
        return self._run(self._commit(answer, summary))

    def discard(self) -> str:
        """Drop the request; nothing of it is committed. Its id."""
        return self._run(self._discard())

    def _run(self, steps: Steps[T]) -> T:
        """Perform `steps` on the sync driver, one call at a time (a request is one sequence
        of steps, whichever threads call it); a request they closed lets its hold go."""
        with self._calls:
            self.touch()
            try:
                return drive(steps, self._serve)
            finally:
                self.touch()
                if self.closed:
                    self._release()

    def _serve(self, need: Any) -> Any:
        if isinstance(need, Approve):
            assert self._agent.approve is not None  # a host agent always has one
            return approver_outcome(self._agent.approve, need.approval)
        return self._agent.repo.run(need)

    def _holding(self) -> bool:
        return self._hold is not None

    def _release(self) -> None:
        self._abandon.detach()
        if self._hold is not None:
            hold, self._hold = self._hold, None
            hold.__exit__(None, None, None)
