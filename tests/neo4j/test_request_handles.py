"""A request belongs to the client that began it: its handle opens it, nothing else does,
from this front door or from another after a restart; an operator takes over only what no
live writer holds, and says so."""

from __future__ import annotations

import logging

import pytest

from flowstate import AsyncFlowState, FlowState
from flowstate.errors import RequestHeld, UsageError, WrongHandle
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import Shell, add
from tests.neo4j.test_session import BUDGET, first_request

pytestmark = pytest.mark.neo4j


def test_only_the_handle_opens_a_request_and_a_refusal_changes_nothing(
    store: Store, namespace: str, repo: Repository
) -> None:
    first_request(store, namespace)
    fs = FlowState(store, namespace)
    session = fs.begin("Book a hotel")
    assert session.handle is not None and session.handle.startswith("fsh_")
    session.record([add("plan", "decision")])
    before = repo.open_request(session.request_id)
    for wrong in ("", None, "fsh_guess", session.handle[:-1], session.handle + "x"):
        with pytest.raises(WrongHandle, match="not open to this handle"):
            fs.session(session.request_id, wrong)  # type: ignore[arg-type]
        with pytest.raises(WrongHandle):
            fs.discard(session.request_id, handle=wrong or "x")
    with pytest.raises(RequestHeld, match="a session of this process holds it"):
        fs.discard(session.request_id)  # an operator never takes it from a live client
    with pytest.raises(RequestHeld):
        fs.resume(session.request_id)
    assert repo.open_request(session.request_id) == before
    assert fs.session(session.request_id, session.handle) is session
    result = session.commit("Booked", "Hotel booked")
    assert result.calls == [] and result.steps == 2  # the host's steps: no model call of ours
    # Its retried commit is answered to it alone.
    again = fs.session(session.request_id, session.handle)
    retried = again.commit("Booked")
    assert again.closed and (retried.answer, retried.states_added) == ("Booked", ["r2.plan"])
    assert result.states_added == ["r2.plan"]
    with pytest.raises(WrongHandle):
        fs.session(session.request_id, "fsh_guess")
    stored = repo.get_request(session.request_id)
    assert stored.handle_hash is not None and session.handle not in repr(stored)
    fs.close()


def test_another_front_door_picks_a_request_up_by_its_handle(
    store: Store, namespace: str, repo: Repository
) -> None:
    """A restarted server: the client's handle opens its request from the draft."""
    first_request(store, namespace)
    first = FlowState(store, namespace)
    session = first.begin("Book a hotel")
    session.reveal(["r1.budget"])
    rid, handle = session.request_id, session.handle
    assert handle is not None
    first.close()  # the server stops: its hold lapses, the draft stays
    second = FlowState(store, namespace)
    for wrong in ("fsh_guess", "", None):  # none is no operator's take-over either
        with pytest.raises(WrongHandle):
            second.session(rid, wrong)  # type: ignore[arg-type]
    picked = second.session(rid, handle)
    assert "r1.budget" in picked.active.revealed and picked.handle == handle
    picked.record([add("plan", "decision")])
    assert picked.commit("Booked").states_added == [f"{rid}.plan"]
    second.close()


def test_an_operator_takes_over_a_lapsed_request_with_a_new_handle_and_says_so(
    store: Store, namespace: str, repo: Repository, caplog: pytest.LogCaptureFixture
) -> None:
    first = FlowState(store, namespace)
    session = first.begin("walked away")
    old = session.handle
    holder = repo.open_request(session.request_id)
    assert holder is not None and old is not None
    first.close()
    operator = FlowState(store, namespace)
    with caplog.at_level(logging.WARNING, logger="flowstate"):
        taken = operator.resume(session.request_id)
    assert taken.taken_over_from == holder.holder
    assert f"took over request {session.request_id} from {holder.holder}" in caplog.text
    assert taken.handle is not None and taken.handle != old
    taken.__exit__(None, None, None)
    operator.close()
    third = FlowState(store, namespace)
    with pytest.raises(WrongHandle):  # the old client's handle no longer opens it
        third.session(session.request_id, old)
    assert third.session(session.request_id, taken.handle).request_id == session.request_id
    third.close()


def test_the_async_front_door_holds_the_same_rule(
    store: Store, async_shell: Shell, namespace: str, repo: Repository
) -> None:
    first_request(store, namespace)
    astore = async_shell.store
    assert astore is not None

    async def run() -> None:
        fs = AsyncFlowState(astore, namespace)
        session = await fs.begin("Book a hotel")
        assert session.handle is not None
        await session.record([BUDGET | {"key": "budget2"}])
        with pytest.raises(WrongHandle):
            await fs.session(session.request_id, "fsh_guess")
        with pytest.raises(WrongHandle):
            await fs.discard(session.request_id, handle="fsh_guess")
        assert await fs.session(session.request_id, session.handle) is session
        assert await fs.discard(session.request_id, handle=session.handle) == "r2"
        with pytest.raises(UsageError, match="r2 was discarded"):
            await fs.session(session.request_id, session.handle)
        await fs.close()

    async_shell.wait(run())
    assert repo.open_requests() == []


def test_get_reads_one_record_of_each_kind(store: Store, namespace: str, repo: Repository) -> None:
    from flowstate.errors import NotFoundError
    from flowstate.models.views import RequestRecord, RevealedState

    fs = FlowState(store, namespace)
    session = fs.begin("Find a hotel")
    oid = session.observe("search", {"city": "Lisbon"}, "Casa Azul, 120 EUR")
    session.record([add("hotel", "decision") | {"evidence": [oid]}])
    session.guard("book", {"id": "H1"}, cites=["r1.hotel"])
    session.commit("Casa Azul", "Hotel found")
    state = fs.get("r1.hotel")
    assert isinstance(state, RevealedState) and state.state.id == "r1.hotel"
    request = fs.get("r1")
    assert isinstance(request, RequestRecord)
    assert [s.id for s in request.states] == ["r1.hotel"] and request.request.answer == "Casa Azul"
    assert fs.get(oid).id == oid and fs.get("r1.a1").id == "r1.a1"  # type: ignore[union-attr]
    with pytest.raises(NotFoundError):
        fs.get("r9.nothing")
    with pytest.raises(UsageError, match="is not an id like r3"):
        fs.get("MATCH (n) DETACH DELETE n")
    fs.close()


def test_a_hosts_guard_and_observation_are_its_own_inputs(
    store: Store, namespace: str, repo: Repository
) -> None:
    """A guard keeps no stand-in observation and calls no model: the host's tool result is the
    request's first observation, and the log says the host runs the approved call."""
    fs = FlowState(store, namespace)
    session = fs.begin("Book the hotel")
    session.record([add("hotel", "decision")])
    verdict = session.guard("book_hotel", {"id": "H1"}, cites=["hotel"])
    assert verdict.approved and verdict.decision_id == "r1.a1"
    assert session.active.observations == {}
    assert session.observe("book_hotel", {"id": "H1"}, "booked H1") == "r1.o1"
    assert any("approved by the guard; the host runs it" in r.action for r in session.active.log)
    refused = session.guard("book_hotel", {"id": "H1"}, cites=[])
    assert not refused.approved and refused.decision_id == "r1.a2"
    result = session.commit("Booked", "Hotel booked")
    assert result.calls == [] and [d.approved for d in repo.bundles()[0].decisions] == [True, False]
    fs.close()


def test_expire_spares_a_session_in_use_and_its_calls_take_turns(
    store: Store, namespace: str, repo: Repository
) -> None:
    import time
    from concurrent.futures import ThreadPoolExecutor

    fs = FlowState(store, namespace)
    busy = fs.begin("busy")
    time.sleep(1.2)
    busy.record([add("a")])  # used by a call of its own, never looked up again
    assert fs.expire(idle_s=1) == []
    with ThreadPoolExecutor(8) as pool:  # one request's calls, from many threads at once
        done = list(pool.map(lambda n: busy.record([add(f"k{n}")]), range(8)))
    assert all(d.applied for d in done)
    assert len(busy.active.states) == 9
    for bad in (0, -1, "10", None, True):
        with pytest.raises(UsageError, match="idle_s must be a positive number"):
            fs.expire(bad)  # type: ignore[arg-type]
    assert [r.request_id for r in repo.open_requests()] == [busy.request_id]
    fs.close()
