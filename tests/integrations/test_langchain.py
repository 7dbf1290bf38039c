"""The LangChain middleware, run by LangChain's own agent (`create_agent`, its fake chat model
scripting the replies) against the real Neo4j: a run is one request, its memory tools follow
the session's rules, consequential tools pass FlowState's guard, and what is stored is what
the session API stores for the same steps."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from flowstate import AsyncFlowState, FlowState, UsageError
from flowstate.integrations.langchain import FlowStateMiddleware
from flowstate.settings import Neo4jSettings
from tests.integrations import scenario as sc
from tests.integrations.crash_worker import crash
from tests.integrations.fake_chat import ScriptedChat

pytestmark = pytest.mark.neo4j

TOOLS = [tool(sc.search_hotels), tool(sc.book_hotel)]


def replies(turns: list[sc.Turn]) -> list[AIMessage]:
    return [
        AIMessage(turn)
        if isinstance(turn, str)
        else AIMessage(
            "",
            tool_calls=[
                {"name": name, "args": args, "id": f"c{n}_{i}"}
                for i, (name, args) in enumerate(turn)
            ],
        )
        for n, turn in enumerate(turns)
    ]


def user(text: str, **state: Any) -> Any:
    return {"messages": [{"role": "user", "content": text}], **state}


def run(memory: FlowStateMiddleware, text: str, turns: list[sc.Turn], **state: Any) -> ScriptedChat:
    model = ScriptedChat.of(replies(turns))
    create_agent(model, tools=TOOLS, middleware=[memory]).invoke(user(text, **state))
    return model


@pytest.mark.parametrize("front", ["sync", "async"])
def test_three_requests_store_what_the_session_api_stores(
    front: str, fs: FlowState, twin: FlowState, neo4j_settings: Neo4jSettings
) -> None:
    models: list[ScriptedChat] = []
    if front == "sync":
        memory = FlowStateMiddleware(fs, consequential={"book_hotel"})
        models = [run(memory, text, turns) for text, turns in sc.REQUESTS]
    else:

        async def main() -> None:
            async with await AsyncFlowState.connect(
                settings=neo4j_settings, namespace=fs.namespace
            ) as afs:
                memory = FlowStateMiddleware(afs, consequential={"book_hotel"})
                for text, turns in sc.REQUESTS:
                    model = ScriptedChat.of(replies(turns))
                    agent = create_agent(model, tools=TOOLS, middleware=[memory])
                    await agent.ainvoke(user(text))
                    models.append(model)

        asyncio.run(main())

    third = models[2]
    sc.third_request_as_the_session_api(third.prompts, third.tools[0], fs, twin)


def test_a_hostile_model_is_refused_with_the_reason_and_changes_nothing(fs: FlowState) -> None:
    memory = FlowStateMiddleware(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, sc.REQUESTS[0][1])
    told = run(memory, sc.HOSTILE_TEXT, list(sc.HOSTILE)).prompts[1:]
    sc.hostile_refused(fs, told)


def test_parallel_tool_calls_are_each_kept_and_each_guarded(fs: FlowState) -> None:
    memory = FlowStateMiddleware(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, sc.REQUESTS[0][1])
    shown = run(memory, sc.PARALLEL_TEXT, list(sc.PARALLEL)).prompts[2]
    sc.parallel_each_kept_and_guarded(fs, shown)


def test_a_failed_run_is_discarded(fs: FlowState) -> None:
    @tool
    def flaky(city: str) -> str:
        """Breaks."""
        raise RuntimeError("the booking service went away")

    memory = FlowStateMiddleware(fs)
    turns: list[sc.Turn] = [
        [("memory_record", {"delta": [sc.BUDGET]})],
        [("flaky", {"city": "Lisbon"})],
    ]
    agent = create_agent(ScriptedChat.of(replies(turns)), tools=[flaky], middleware=[memory])
    with pytest.raises(RuntimeError, match="the booking service went away"):
        agent.invoke(user(sc.FIRST))
    assert fs.pending() == [] and fs.history() == []


def test_a_checkpointed_thread_keeps_one_request_per_run(fs: FlowState) -> None:
    """The request rides in the thread's state: each run on the thread is a request of its
    own, committed when the run ends."""
    memory = FlowStateMiddleware(fs)
    saver = InMemorySaver()
    config: Any = {"configurable": {"thread_id": "trip"}}
    for text, turns in sc.REQUESTS[:1] + [(sc.SECOND, ["Nothing to search yet."])]:
        model = ScriptedChat.of(replies(turns))
        agent = create_agent(model, tools=TOOLS, middleware=[memory], checkpointer=saver)
        out = agent.invoke(user(text), config)
        assert "flowstate" not in out  # its handle stays out of the run's output
    assert [(r.id, r.text) for r in fs.history()] == [("r1", sc.FIRST), ("r2", sc.SECOND)]


def test_a_run_killed_mid_way_resumes_from_its_draft(
    fs: FlowState, neo4j_settings: Neo4jSettings, tmp_path: Path
) -> None:
    request_id, handle = crash("langchain", neo4j_settings, fs.namespace, tmp_path)
    [left] = fs.pending()
    assert left.request_id == request_id
    memory = FlowStateMiddleware(fs)
    ref = {"request_id": request_id, "handle": handle}
    model = run(memory, "Go on", [sc.RESUMED_ANSWER], flowstate=ref)
    sc.resumed_as_left(fs, request_id, model.prompts[0])


def test_a_consequential_name_no_tool_has_fails_the_run_and_keeps_nothing(fs: FlowState) -> None:
    memory = FlowStateMiddleware(fs, consequential={"book_hotl"})
    with pytest.raises(UsageError, match=r"consequential tools not among the agent's tools"):
        run(memory, sc.FIRST, ["Noted."])
    assert fs.pending() == [] and fs.history() == []
