"""The async front door: `AsyncFlowState` and `AsyncAgent` reach Neo4j only through the async
driver, never through a thread or the sync driver, and renew the lease with a task."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import neo4j
import pytest

from flowstate import (
    Approval,
    AsyncAgent,
    AsyncFlowState,
    Outcome,
    ScriptedModel,
    StoreError,
    Tool,
    Transcript,
    UsageError,
    ValidationFailed,
)
from flowstate.llm.scripted import unregister
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository
from tests.neo4j.engine_helpers import add, final, step, tool

pytestmark = pytest.mark.neo4j


def _script(name: str) -> ScriptedModel:
    return ScriptedModel.sequence(
        name,
        [
            step([add("city", "constraint")]),
            step(action={**tool("book", city="Porto"), "cites": ["r1.city"]}),
            step([add("hotel", evidence=["r1.o1"])], action=final("booked", "Porto booked")),
        ],
    )


async def book(city: str) -> str:
    """Book a hotel (spends money)."""
    await asyncio.sleep(0)
    return f"booked in {city}"


async def approve(asked: Approval) -> bool:
    await asyncio.sleep(0)
    return True


def _refuse(what: str) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"{what} used during arun")

    return refused


def test_the_async_front_door_runs_a_request_without_threads_or_the_sync_driver(
    neo4j_settings: Neo4jSettings,
    namespace: str,
    repo: Repository,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The sync driver and `asyncio.to_thread` fail while the request runs (a sync store in
    a thread would reach the sync driver too); the async driver answers every query."""
    model = _script(f"{namespace}-async")
    queries: list[str] = []
    real_query = neo4j.AsyncDriver.execute_query

    async def counted(driver: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        queries.append(str(query))
        return await real_query(driver, query, *args, **kwargs)

    async def scenario() -> Any:
        async with await AsyncFlowState.connect(namespace=namespace, settings=neo4j_settings) as fs:
            guarded = Tool.from_function(book, consequential=True)
            agent = await fs.agent(model.client(), tools=[guarded], approve=approve)
            agent.on_call = transcript = Transcript()
            with monkeypatch.context() as m:
                m.setattr(neo4j.Driver, "execute_query", _refuse("the sync driver"))
                m.setattr(neo4j.Driver, "session", _refuse("the sync driver"))
                m.setattr(asyncio, "to_thread", _refuse("asyncio.to_thread"))
                m.setattr(neo4j.AsyncDriver, "execute_query", counted)
                result = await agent.arun("Book Porto")
            return result, transcript, (await fs.index()).text

    try:
        result, transcript, index = asyncio.run(scenario())
    finally:
        unregister(model.name)
    assert (result.outcome, result.answer) == (Outcome.ANSWERED, "booked")
    assert any("Draft" in q for q in queries) and any("Namespace" in q for q in queries)
    assert len(transcript.prompts) == len(transcript.replies) == 3
    assert "Book Porto" in transcript.prompts[0][-1]["content"]
    [bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r1.city", "r1.hotel"]
    assert [d.approved for d in bundle.decisions] == [True]
    assert "r1: Porto booked" in index


def test_the_async_hold_is_renewed_by_a_task_and_released(
    neo4j_settings: Neo4jSettings, namespace: str, repo: Repository
) -> None:
    seen: list[set[str]] = []

    async def slow(city: str) -> str:
        """Look a city up, slowly."""
        seen.append({t.get_name() for t in asyncio.all_tasks()})
        await asyncio.sleep(0)
        return city

    model = ScriptedModel.sequence(
        f"{namespace}-hold", [step(action=tool("slow", city="Porto")), step(action=final())]
    )

    async def scenario() -> None:
        fs = await AsyncFlowState.connect(namespace=namespace, settings=neo4j_settings)
        try:
            agent = await fs.agent(model.client(), tools=[slow])
            await agent.arun("go")
            assert repo.open_requests() == []  # committed: nothing is held
            assert "flowstate-hold" not in {t.get_name() for t in asyncio.all_tasks()}
        finally:
            await fs.close()

    try:
        asyncio.run(scenario())
    finally:
        unregister(model.name)
    assert ["flowstate-hold" in names for names in seen] == [True]


def test_an_async_agent_builds_without_io_and_loads_its_index_at_the_first_request(
    neo4j_settings: Neo4jSettings, namespace: str, repo: Repository
) -> None:
    first = ScriptedModel.sequence(f"{namespace}-a", [step([add("fact")], action=final())])
    second = ScriptedModel.sequence(f"{namespace}-b", [step(action=final())])

    async def scenario() -> None:
        async with await AsyncFlowState.connect(namespace=namespace, settings=neo4j_settings) as fs:
            await (await fs.agent(first.client())).arun("remember")
            agent = AsyncAgent(fs.repository, second.client())  # no I/O here
            assert agent.index.requests == []
            await agent.arun("recall")
            assert "r1" in agent.index

    try:
        asyncio.run(scenario())
    finally:
        unregister(first.name)
        unregister(second.name)
    assert "r1.fact" in second.calls[0].messages[-1]["content"]


def test_connect_refuses_a_bad_namespace_and_an_absent_server(
    neo4j_settings: Neo4jSettings,
) -> None:
    async def bad_namespace() -> None:
        await AsyncFlowState.connect(namespace="no spaces", settings=neo4j_settings)

    with pytest.raises(ValidationFailed, match="invalid namespace"):
        asyncio.run(bad_namespace())

    async def nobody() -> None:
        await AsyncFlowState.connect("bolt://127.0.0.1:1", settings=neo4j_settings)

    with pytest.raises(StoreError, match="no Neo4j server answered"):
        asyncio.run(nobody())


def test_an_async_agent_refuses_a_model_that_is_no_client(
    neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    async def scenario() -> None:
        async with await AsyncFlowState.connect(namespace=namespace, settings=neo4j_settings) as fs:
            await fs.agent(42)  # type: ignore[arg-type]

    with pytest.raises(UsageError, match="model must be a litellm model name"):
        asyncio.run(scenario())
