"""The same work through `FlowState` and through `AsyncFlowState`, each in a namespace of its
own, reads back the same: history, pending requests, provenance with its superseded marks,
search hits, browsing, the index, and a session picked up from its draft.

The two scenarios below are one script written for each front door, line for line."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import neo4j
import pytest

from flowstate import (
    Approval,
    AsyncFlowState,
    FlowState,
    RequestInterrupted,
    RunResult,
    ScriptedModel,
)
from flowstate.engine.async_session import AsyncSession
from flowstate.llm.scripted import unregister
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import Shell, add, final, step

pytestmark = pytest.mark.neo4j

BUDGET = add("budget", "constraint", "Hotel budget 150 EUR a night", "At most 150 EUR a night")
HOTEL = add(
    "hotel",
    "decision",
    "Casa Azul fits the hotel budget",
    "Casa Azul, 120 EUR a night",
    relations=[{"type": "DEPENDS_ON", "target": "r1.budget"}],
)
LOWER = add(
    "budget",
    "constraint",
    "Hotel budget 110 EUR a night",
    "At most 110 EUR a night",
    relations=[{"type": "SUPERSEDES", "target": "r1.budget"}],
)
BOOKING = add(
    "booking",
    "decision",
    "Book Casa Azul within the lowered budget",
    "H1 at 105 EUR a night fits 110 EUR",
    relations=[{"type": "DEPENDS_ON", "target": "r2.budget"}],
    evidence=["r4.o1"],
)
NOTE = add("note", "preference", "Quiet room wanted", "A quiet room, away from the street")


def _script(name: str) -> ScriptedModel:
    return ScriptedModel.sequence(
        name, [step([BUDGET, HOTEL], action=final("Casa Azul", "Hotel budget and choice"))]
    )


def _sync_scenario(fs: FlowState, model: ScriptedModel) -> dict[str, Any]:
    fs.agent(model).run("Find a hotel under 150 EUR a night")
    fs.remember([LOWER], "Our budget is now 110 EUR a night", summary="Budget lowered")
    left = fs.begin("Book the hotel")
    left.reveal(["r1.hotel"])
    left.record([NOTE])
    left.__exit__(None, None, None)  # left: its draft stays, its hold lapses
    browse = fs.browse()
    picked = fs.resume("r3")
    seen = {
        "pending": fs.pending(),
        "picked": (picked.request_id, picked.active.step, sorted(picked.active.revealed)),
    }
    picked.__exit__(None, None, None)
    return {
        **seen,
        "history": fs.history(),
        "why": fs.why("r1.hotel"),
        "search": fs.search("hotel budget"),
        "opened": [browse.open(["r1.hotel"]), browse.open(["r1.o1", "r2.budget"])],
        "index": fs.index().text,
        "shown": fs.shown_index("hotel").text,
        "chosen": fs.chosen(),
        "discarded": fs.discard(),
        "after": fs.pending(),
        "booked": _sync_booking(fs),
    }


def _sync_booking(fs: FlowState) -> tuple[Any, ...]:
    def approve(asked: Approval) -> bool:
        return asked.tool == "book"

    session = fs.begin("Book it now", approve=approve)
    session.reveal(["r2.budget"])
    session.observe("search", {"city": "Lisbon"}, '[{"id": "H1", "price": 105}]')
    session.record([BOOKING])
    verdict = session.guard("book", {"hotel": "H1"}, cites=["r4.booking", "r2.budget"])
    return verdict, session.commit("Booked Casa Azul", "Hotel booked"), fs.history()[-1]


async def _async_scenario(fs: AsyncFlowState, model: ScriptedModel) -> dict[str, Any]:
    await (await fs.agent(model)).arun("Find a hotel under 150 EUR a night")
    await fs.remember([LOWER], "Our budget is now 110 EUR a night", summary="Budget lowered")
    left = await fs.begin("Book the hotel")
    await left.reveal(["r1.hotel"])
    await left.record([NOTE])
    await left.__aexit__(None, None, None)  # left: its draft stays, its hold lapses
    browse = await fs.browse()
    picked = await fs.resume("r3")
    seen = {
        "pending": await fs.pending(),
        "picked": (picked.request_id, picked.active.step, sorted(picked.active.revealed)),
    }
    await picked.__aexit__(None, None, None)
    return {
        **seen,
        "history": await fs.history(),
        "why": await fs.why("r1.hotel"),
        "search": await fs.search("hotel budget"),
        "opened": [await browse.open(["r1.hotel"]), await browse.open(["r1.o1", "r2.budget"])],
        "index": (await fs.index()).text,
        "shown": (await fs.shown_index("hotel")).text,
        "chosen": await fs.chosen(),
        "discarded": await fs.discard(),
        "after": await fs.pending(),
        "booked": await _async_booking(fs),
    }


async def _async_booking(fs: AsyncFlowState) -> tuple[Any, ...]:
    async def approve(asked: Approval) -> bool:  # awaited by the async session
        return asked.tool == "book"

    session = await fs.begin("Book it now", approve=approve)
    await session.reveal(["r2.budget"])
    await session.observe("search", {"city": "Lisbon"}, '[{"id": "H1", "price": 105}]')
    await session.record([BOOKING])
    verdict = await session.guard("book", {"hotel": "H1"}, cites=["r4.booking", "r2.budget"])
    return (
        verdict,
        await session.commit("Booked Casa Azul", "Hotel booked"),
        (await fs.history())[-1],
    )


def _comparable(seen: dict[str, Any], namespace: str) -> dict[str, Any]:
    """What both runs must agree on: everything but times, scores, holders and the namespace."""
    why = seen["why"]
    return {
        "history": [
            (r.id, r.text, r.summary, r.answer, r.outcome, r.steps) for r in seen["history"]
        ],
        "pending": [(p.request_id, p.held, p.steps, p.text) for p in seen["pending"]],
        "picked": seen["picked"],
        "why": (
            [s.id for s in why.states],
            why.edges,
            why.superseded,
            [r.id for r in why.requests],
            # The two runs may straddle a minute: the tree's request times are left out.
            re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d", "TIME", why.tree().replace(namespace, "NS")),
        ),
        "search": [(h.id, h.category, h.summary, h.superseded_by) for h in seen["search"]],
        "opened": [
            (
                [(r.state.id, r.state.content, r.relations, r.superseded_by) for r in o.states],
                [m.replace(namespace, "NS") for m in o.rejections],
            )
            for o in seen["opened"]
        ],
        "index": seen["index"],
        "shown": seen["shown"],
        "chosen": seen["chosen"],
        "discarded": seen["discarded"],
        "after": seen["after"],
        "booked": (
            seen["booked"][0],
            {
                "request_id": seen["booked"][1].request_id,
                "outcome": seen["booked"][1].outcome,
                "states_added": seen["booked"][1].states_added,
            },
            seen["booked"][2].model_dump(include={"id", "summary", "answer", "outcome"}),
        ),
    }


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a driver was used where no I/O belongs")


def test_both_front_doors_read_back_the_same(
    store: Store,
    repo: Repository,
    other_repo: Repository,
    async_shell: Shell,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The async run never touches the sync driver."""
    sync_model = _script(f"{repo.namespace}-sync")
    async_model = _script(f"{repo.namespace}-async")
    assert async_shell.store is not None
    try:
        by_sync = _sync_scenario(FlowState(store, repo.namespace), sync_model)
        afs = AsyncFlowState(async_shell.store, other_repo.namespace)
        with monkeypatch.context() as m:
            m.setattr(neo4j.Driver, "execute_query", _refuse)
            m.setattr(neo4j.Driver, "session", _refuse)
            by_async = async_shell.wait(_async_scenario(afs, async_model))
    finally:
        unregister(sync_model.name)
        unregister(async_model.name)
    sync_view = _comparable(by_sync, repo.namespace)
    assert sync_view == _comparable(by_async, other_repo.namespace)
    # And what they agree on is the scenario's, not two empty answers.
    assert [h[0] for h in sync_view["history"]] == ["r1", "r2"]
    assert sync_view["pending"] == [("r3", True, 2, "Book the hotel")]  # held: picked up
    assert sync_view["picked"] == ("r3", 2, ["r1.hotel"])
    assert sync_view["why"][2] == {"r1.budget": ["r2.budget"]}
    assert {"r1.hotel", "r1.budget", "r2.budget"} == {h[0] for h in sync_view["search"]}
    [hotel], [] = sync_view["opened"][0]
    assert hotel[0] == "r1.hotel"
    assert [s[0] for s in sync_view["opened"][1][0]] == ["r2.budget"]
    assert sync_view["opened"][1][1] and "r1.o1" in sync_view["opened"][1][1][0]
    assert "(SUPERSEDED by r2.budget)" in sync_view["index"]
    assert (sync_view["chosen"], sync_view["discarded"], sync_view["after"]) == ("r3", "r3", [])
    verdict, result, request = sync_view["booked"]
    assert (verdict.approved, verdict.decision_id) == (True, "r4.a1")
    assert result["states_added"] == ["r4.booking"] and request["id"] == "r4"


def test_a_dropped_async_session_lets_its_request_go(repo: Repository, async_shell: Shell) -> None:
    import gc

    assert async_shell.store is not None
    fs = AsyncFlowState(async_shell.store, repo.namespace)

    async def drop() -> str:
        # Built apart from a front door, which would keep it for its client.
        session = await AsyncSession.start(fs.repository, "dropped")
        rid = session.request_id
        assert (await fs.pending())[0].held
        del session
        gc.collect()
        for _ in range(100):  # released on the session's loop, soon after
            await asyncio.sleep(0.1)
            if not (await fs.pending())[0].held:
                return rid
        raise AssertionError("the request is still held")

    rid = async_shell.wait(drop())
    picked = async_shell.wait(fs.resume(rid))  # another writer can go on at once
    assert async_shell.wait(picked.discard()) == rid


def test_both_front_doors_build_agents_without_io_and_load_at_the_first_request(
    store: Store, repo: Repository, async_shell: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert async_shell.store is not None
    fs = FlowState(store, repo.namespace)
    afs = AsyncFlowState(async_shell.store, repo.namespace)
    fs.remember([BUDGET], "Our hotel budget is 150 EUR a night", summary="Hotel budget")
    sync_model = ScriptedModel.sequence(f"{repo.namespace}-s", [step(action=final())])
    async_model = ScriptedModel.sequence(f"{repo.namespace}-a", [step(action=final())])
    try:
        with monkeypatch.context() as m:
            for driver in (neo4j.Driver, neo4j.AsyncDriver):
                m.setattr(driver, "execute_query", _refuse)
                m.setattr(driver, "session", _refuse)
            agent, async_agent = fs.agent(sync_model), async_shell.wait(afs.agent(async_model))
        assert (agent.loaded_at, async_agent.loaded_at) == (None, None)
        agent.run("what is our budget?")
        async_shell.wait(async_agent.arun("what is our budget?"))
    finally:
        unregister(sync_model.name)
        unregister(async_model.name)
    for model in (sync_model, async_model):
        assert (
            "r1.budget [constraint] Hotel budget 150 EUR" in model.calls[0].messages[-1]["content"]
        )


def _resumed(fs: FlowState, flaky: ScriptedModel, steady: ScriptedModel) -> RunResult:
    fs.remember([BUDGET], "Our hotel budget is 150 EUR a night", summary="Budget")
    with pytest.raises(RequestInterrupted):
        fs.agent(flaky, retry_backoff_s=0).run("Plan the trip")
    return fs.agent(steady).resume()  # a fresh agent: nothing loaded yet


async def _aresumed(fs: AsyncFlowState, flaky: ScriptedModel, steady: ScriptedModel) -> RunResult:
    await fs.remember([BUDGET], "Our hotel budget is 150 EUR a night", summary="Budget")
    with pytest.raises(RequestInterrupted):
        await (await fs.agent(flaky, retry_backoff_s=0)).arun("Plan the trip")
    return await (await fs.agent(steady)).aresume()


def test_a_fresh_agent_of_either_front_door_resumes_with_the_index_loaded(
    store: Store, repo: Repository, other_repo: Repository, async_shell: Shell
) -> None:
    assert async_shell.store is not None
    name = repo.namespace
    models = [ScriptedModel.sequence(f"{name}-{n}", [step([NOTE])]) for n in ("f1", "f2")]
    models += [ScriptedModel.sequence(f"{name}-{n}", [step(action=final())]) for n in ("s1", "s2")]
    flaky, aflaky, steady, asteady = models  # each flaky one fails after its one step
    try:
        results = [
            _resumed(FlowState(store, repo.namespace), flaky, steady),
            async_shell.wait(
                _aresumed(AsyncFlowState(async_shell.store, other_repo.namespace), aflaky, asteady)
            ),
        ]
    finally:
        for model in models:
            unregister(model.name)
    for result, model in zip(results, (steady, asteady), strict=True):
        assert result.request_id == "r2" and result.states_added == ["r2.note"]
        assert "r1.budget [constraint]" in model.calls[0].messages[-1]["content"]
