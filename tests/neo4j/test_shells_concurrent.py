"""Requests running at once in one namespace, through the shells a host uses: the session API
(`fs.begin`) and the async front door (`AsyncFlowState`); the MCP server's are in
test_mcp_concurrent.py. In each: two requests
open at once commit under distinct ids; of two commits superseding one past state the second is
refused with a reason, revised and committed; a consequential call is judged on what is
committed at the moment of the decision (docs/deploying-safely.md, "Many writers on one
namespace"). The interleavings are forced by the order of the calls, or by events the tools
wait on, never by timing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest

from flowstate import AgentConfig, Approval, AsyncFlowState, FlowState, ScriptedModel, Tool
from flowstate.errors import UsageError
from flowstate.llm.scripted import unregister
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import BUDGET, add, final, lowered, step, tool, user_prompt

pytestmark = pytest.mark.neo4j


def supersessions(repo: Repository) -> dict[str, str | None]:
    return {s.id: s.superseded_by for r in repo.index() for s in r.states if "budget" in s.id}


@pytest.fixture
def fs(store: Store, repo: Repository) -> FlowState:
    """The namespace with r1.budget committed."""
    fs = FlowState(store, repo.namespace)
    fs.remember([BUDGET], "Our hotel budget is 150 EUR a night", summary="Budget set")
    return fs


@pytest.fixture
def other_fs(neo4j_settings: Neo4jSettings, repo: Repository) -> Iterator[FlowState]:
    """The same namespace over a connection of its own, as another process would have it."""
    with FlowState.connect(settings=neo4j_settings, namespace=repo.namespace) as other:
        yield other


# --- the session API ----------------------------------------------------------------------


def test_sessions_of_one_front_door_and_of_another_run_at_once(
    fs: FlowState, other_fs: FlowState, repo: Repository
) -> None:
    a, b, c = fs.begin("first"), fs.begin("second"), other_fs.begin("third")
    assert [s.request_id for s in (a, b, c)] == ["r2", "r3", "r4"]
    assert {r.request_id for r in repo.open_requests()} == {"r2", "r3", "r4"}
    for session in (c, a, b):  # committed out of id order
        assert session.record([add("note", summary=f"note of {session.request_id}")]).applied
        session.commit("done", f"commit of {session.request_id}")
    assert [r.id for r in repo.history()] == ["r1", "r2", "r3", "r4"]
    assert repo.open_requests() == []
    # Both front doors followed the commits by number: their indexes are a fresh load's.
    fresh = FlowState(fs.store, repo.namespace).shown_index().text
    assert fs.shown_index().text == other_fs.shown_index().text == fresh


def test_a_second_session_superseding_one_state_is_refused_then_revised(
    fs: FlowState, other_fs: FlowState, repo: Repository
) -> None:
    a, b = fs.begin("budget 120"), other_fs.begin("budget 100")
    for session in (a, b):
        session.reveal(["r1.budget"])
    assert a.record([lowered(120, "r1.budget")]).applied
    assert b.record([lowered(100, "r1.budget")]).applied  # neither knows of the other yet
    a.commit("lowered to 120", "Budget 120")
    with pytest.raises(UsageError, match=r"r1\.budget is already superseded by r2\.budget"):
        b.commit("lowered to 100", "Budget 100")
    assert [r.request_id for r in repo.open_requests()] == ["r3"]  # kept for the revision
    assert "r2.budget [constraint] Hotel budget 120 EUR a night" in b.index()
    revised = b.record([{"op": "remove", "key": "budget"}, lowered(100, "r2.budget")])
    assert revised.applied, revised.rejections
    assert b.commit("lowered to 100", "Budget 100").states_added == ["r3.budget"]
    assert supersessions(repo) == {
        "r1.budget": "r2.budget",
        "r2.budget": "r3.budget",
        "r3.budget": None,
    }


def test_the_newer_state_a_refused_commit_names_can_be_superseded_though_the_index_folds_it(
    fs: FlowState, other_fs: FlowState, repo: Repository
) -> None:
    folding = AgentConfig(index_budget_tokens=50)  # the index shows hardly any line
    a, b = fs.begin("budget 120"), other_fs.begin("lower it to 100", config=folding)
    for session in (a, b):
        session.reveal(["r1.budget"])
        session.record([lowered(120 if session is a else 100, "r1.budget")])
    a.commit("lowered to 120", "Budget 120")
    for n in range(6):  # newer requests: r2 folds into the index's range line
        fs.remember([add(f"note{n}", summary=f"a long note number {n} about the weather")], "n")
    with pytest.raises(UsageError, match=r"already superseded by r2\.budget"):
        b.commit("lowered to 100", "Budget 100")
    assert "r2.budget" not in b.index()  # folded away: only the refusal named it
    revised = b.record([{"op": "remove", "key": "budget"}, lowered(100, "r2.budget")])
    assert revised.applied, revised.rejections
    b.commit("lowered to 100", "Budget 100")
    assert supersessions(repo)["r2.budget"] == "r3.budget"  # r3 began before the notes


def test_a_session_guard_is_judged_on_what_is_committed_when_it_decides(
    fs: FlowState, other_fs: FlowState, repo: Repository
) -> None:
    paying, lowering = fs.begin("pay twice"), other_fs.begin("lower the budget")
    paying.reveal(["r1.budget"])
    lowering.reveal(["r1.budget"])
    assert lowering.record([lowered(90, "r1.budget")]).applied  # recorded, not committed
    first = paying.guard("pay_hotel", {"amount": 140}, cites=["r1.budget"])
    assert first.approved, first.reason  # an open request's supersession does not count yet
    lowering.commit("lowered", "Budget 90")
    second = paying.guard("pay_hotel", {"amount": 140}, cites=["r1.budget"])
    assert not second.approved
    assert "r1.budget is superseded by r3.budget" in second.reason
    paying.commit("paid once", "Payment")
    assert [(d.id, d.approved) for d in repo.decisions("r2")] == [("r2.a1", True), ("r2.a2", False)]


def test_a_session_guard_refuses_a_cited_state_another_process_forgot(
    fs: FlowState, other_fs: FlowState, repo: Repository
) -> None:
    paying = fs.begin("pay the hotel")
    paying.reveal(["r1.budget"])
    other_fs.forget("r1.budget")
    guarded = paying.guard("pay_hotel", {"amount": 140}, cites=["r1.budget"])
    assert not guarded.approved and "r1.budget was forgotten" in guarded.reason


# --- the async front door -----------------------------------------------------------------


def _scripted(name: str, outputs: list[dict[str, Any]]) -> ScriptedModel:
    unregister(name)  # a name left by an earlier failed run of this test
    return ScriptedModel.sequence(name, outputs)


async def _two_async_doors(settings: Neo4jSettings, namespace: str) -> tuple[Any, Any]:
    first = await AsyncFlowState.connect(settings=settings, namespace=namespace)
    second = await AsyncFlowState.connect(settings=settings, namespace=namespace)
    return first, second


async def _second_inside_the_first(
    first: Awaitable[Any],
    second: Callable[[], Awaitable[Any]],
    waits: asyncio.Event,
    done: asyncio.Event,
) -> tuple[Any, Any]:
    """Run `first`, and `second()` once `first` waits inside its tool (`waits`); `done` tells
    the first that the second has finished."""

    async def after_the_first_waits() -> Any:
        await waits.wait()
        try:
            return await second()
        finally:
            done.set()

    ran_first, ran_second = await asyncio.gather(first, after_the_first_waits())
    return ran_first, ran_second


def test_async_agents_run_requests_at_once_and_both_commit(
    fs: FlowState, neo4j_settings: Neo4jSettings, repo: Repository
) -> None:
    both_inside = asyncio.Event()
    inside: list[str] = []

    async def wait_for_the_other() -> str:
        """Returns once both requests are inside this tool: both are open then."""
        inside.append("in")
        if len(inside) == 2:
            both_inside.set()
        await both_inside.wait()
        return "both open"

    async def main() -> list[Any]:
        first, second = await _two_async_doors(neo4j_settings, repo.namespace)
        agents = []
        for n, door in enumerate((first, second)):
            model = _scripted(
                f"{repo.namespace}-async-{n}",
                [
                    step([add("note", summary=f"note {n}")], action=tool("wait_for_the_other")),
                    step(action=final(f"answer {n}", f"Request {n}")),
                ],
            )
            agents.append(await door.agent(model, tools=[wait_for_the_other]))
        try:
            return list(await asyncio.gather(*(a.arun(f"note {n}") for n, a in enumerate(agents))))
        finally:
            await first.close()
            await second.close()

    results = asyncio.run(main())
    assert sorted(r.request_id for r in results) == ["r2", "r3"]
    assert [r.id for r in repo.history()] == ["r1", "r2", "r3"]
    assert repo.open_requests() == []


def test_async_commit_superseding_a_state_superseded_meanwhile_is_refused_then_revised(
    fs: FlowState, neo4j_settings: Neo4jSettings, repo: Repository
) -> None:
    first_waits, second_done = asyncio.Event(), asyncio.Event()

    async def wait_for_the_other() -> str:
        """Holds the first request open until the second one has committed."""
        first_waits.set()
        await second_done.wait()
        return "the other committed"

    first_model = _scripted(
        f"{repo.namespace}-first",
        [
            step(access=["r1.budget"]),
            step([lowered(120, "r1.budget")], action=tool("wait_for_the_other")),
            step(action=final("lowered to 120", "Budget 120")),  # its commit is refused
            step(
                [{"op": "remove", "key": "budget"}, lowered(120, "r3.budget")],
                action=final("lowered to 120 after r3", "Budget 120"),
            ),
        ],
    )
    second_model = _scripted(
        f"{repo.namespace}-second",
        [
            step(access=["r1.budget"]),
            step([lowered(100, "r1.budget")], action=final("lowered to 100", "Budget 100")),
        ],
    )

    async def main() -> tuple[Any, Any]:
        first, second = await _two_async_doors(neo4j_settings, repo.namespace)
        try:
            a = await first.agent(first_model, tools=[wait_for_the_other])
            b = await second.agent(second_model)

            return await _second_inside_the_first(
                a.arun("lower the budget to 120"),
                lambda: b.arun("lower the budget to 100"),
                first_waits,
                second_done,
            )
        finally:
            await first.close()
            await second.close()

    ran_first, ran_second = asyncio.run(main())
    assert (ran_first.request_id, ran_second.request_id) == ("r2", "r3")
    assert ran_first.answer == "lowered to 120 after r3" and ran_first.steps == 4
    told = user_prompt(first_model, 3)
    assert "final answer held back" in told
    assert "r1.budget is already superseded by r3.budget" in told
    assert supersessions(repo) == {
        "r1.budget": "r3.budget",
        "r3.budget": "r2.budget",
        "r2.budget": None,
    }


def test_async_guard_is_judged_on_a_supersession_committed_while_the_request_ran(
    fs: FlowState, neo4j_settings: Neo4jSettings, repo: Repository
) -> None:
    first_waits, second_done = asyncio.Event(), asyncio.Event()
    asked: list[Approval] = []

    async def wait_for_the_other() -> str:
        """Holds the paying request open until the other one has committed."""
        first_waits.set()
        await second_done.wait()
        return "the other committed"

    async def pay_hotel(amount: int) -> str:
        """Pays the hotel (spends money)."""
        return f"paid {amount}"

    async def approve(approval: Approval) -> bool:
        asked.append(approval)
        return True

    pay = {**tool("pay_hotel", amount=140), "cites": ["r1.budget"]}
    paying_model = _scripted(
        f"{repo.namespace}-paying",
        [
            step(access=["r1.budget"], action=tool("wait_for_the_other")),
            step(action=pay),  # r1.budget was current when it was opened
            step(action=final("not paid", "Payment refused")),
        ],
    )
    lowering_model = _scripted(
        f"{repo.namespace}-lowering",
        [
            step(access=["r1.budget"]),
            step([lowered(90, "r1.budget")], action=final("lowered", "Budget 90")),
        ],
    )

    async def main() -> tuple[Any, Any]:
        first, second = await _two_async_doors(neo4j_settings, repo.namespace)
        try:
            paying = await first.agent(
                paying_model,
                tools=[wait_for_the_other, Tool.from_function(pay_hotel, consequential=True)],
                approve=approve,
            )
            lowering = await second.agent(lowering_model)

            return await _second_inside_the_first(
                paying.arun("pay the hotel"),
                lambda: lowering.arun("lower the budget"),
                first_waits,
                second_done,
            )
        finally:
            await first.close()
            await second.close()

    paid, _ = asyncio.run(main())
    assert paid.request_id == "r2" and paid.answer == "not paid"
    assert asked == []  # refused by the rules: the approver was never asked
    [decision] = repo.decisions("r2")
    assert not decision.approved and "r1.budget" in decision.reason
    assert "r3.budget" in decision.reason
    assert "pay_hotel" in user_prompt(paying_model, 2) and "r3.budget" in user_prompt(
        paying_model, 2
    )
