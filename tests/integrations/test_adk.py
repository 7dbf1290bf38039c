"""The ADK plugin and memory service, run by ADK's own `Runner` (a `BaseLlm` returning
scripted responses plays the model) against the real Neo4j: a run is one request, its memory
tools follow the session's rules, consequential tools pass FlowState's guard in
`before_tool_callback`, and what is stored is what the session API stores for the same
steps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

from flowstate import AsyncFlowState, FlowState
from flowstate.integrations.adk import FlowStateMemoryService, FlowStatePlugin
from flowstate.settings import Neo4jSettings
from tests.integrations import scenario as sc
from tests.integrations.crash_worker import crash
from tests.integrations.scripted_llm import ScriptedLlm

pytestmark = pytest.mark.neo4j

TOOLS: list[Callable[..., str]] = [sc.search_hotels, sc.book_hotel]
APP, USER = "trips", "ana"


def runner(memory: FlowStatePlugin, model: ScriptedLlm, tools: list[Any] = TOOLS) -> Runner:
    agent = LlmAgent(name="travel", instruction="Plan trips.", model=model, tools=tools)
    return Runner(
        app=App(name=APP, root_agent=agent, plugins=[memory]),
        session_service=InMemorySessionService(),
        memory_service=FlowStateMemoryService(memory.fs),
        auto_create_session=True,
    )


def message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def run(
    memory: FlowStatePlugin,
    text: str,
    turns: Sequence[sc.Turn | Exception],
    tools: list[Any] = TOOLS,
    state: dict[str, Any] | None = None,
) -> ScriptedLlm:
    """One run through `runner.run` (ADK's sync shell: run_async in a thread of its own)."""
    model = ScriptedLlm.of(list(turns))
    events = runner(memory, model, tools).run(
        user_id=USER, session_id="s1", new_message=message(text), state_delta=state
    )
    for _ in events:
        pass
    return model


@pytest.mark.parametrize("front", ["sync", "async", "async_over_sync"])
def test_three_requests_store_what_the_session_api_stores(
    front: str, fs: FlowState, twin: FlowState, neo4j_settings: Neo4jSettings
) -> None:
    models: list[ScriptedLlm] = []
    if front == "sync":  # runner.run over a FlowState
        memory = FlowStatePlugin(fs, consequential={"book_hotel"})
        models = [run(memory, text, turns) for text, turns in sc.REQUESTS]
    else:

        async def main() -> None:
            async with await AsyncFlowState.connect(
                settings=neo4j_settings, namespace=fs.namespace
            ) as afs:
                memory = FlowStatePlugin(
                    afs if front == "async" else fs, consequential={"book_hotel"}
                )
                for text, turns in sc.REQUESTS:
                    model = ScriptedLlm.of(list(turns))
                    async for _ in runner(memory, model).run_async(
                        user_id=USER, session_id="s1", new_message=message(text)
                    ):
                        pass
                    models.append(model)

        asyncio.run(main())

    third = models[2]
    sc.third_request_as_the_session_api(third.prompts, third.tools[0], fs, twin)
    assert {"memory_reveal", "memory_record", "memory_search"} <= set(third.tools[0])
    assert "Plan trips." in third.prompts[0] and "# Memory (FlowState)" in third.prompts[0]


def test_a_hostile_model_is_refused_with_the_reason_and_changes_nothing(fs: FlowState) -> None:
    memory = FlowStatePlugin(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, list(sc.REQUESTS[0][1]))
    told = run(memory, sc.HOSTILE_TEXT, list(sc.HOSTILE)).prompts[1:]
    sc.hostile_refused(fs, told)
    assert "[kept as" not in told[5]  # a refused call ran nothing to keep


def test_parallel_tool_calls_are_each_kept_and_each_guarded(fs: FlowState) -> None:
    memory = FlowStatePlugin(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, list(sc.REQUESTS[0][1]))
    shown = run(memory, sc.PARALLEL_TEXT, list(sc.PARALLEL)).prompts[2]
    sc.parallel_each_kept_and_guarded(fs, shown)


def test_a_failed_run_is_discarded(fs: FlowState) -> None:
    memory = FlowStatePlugin(fs)
    turns: list[sc.Turn | Exception] = [
        [("memory_record", {"delta": [sc.BUDGET]})],
        RuntimeError("the provider went away"),
    ]
    with pytest.raises(RuntimeError, match="the provider went away"):
        run(memory, sc.FIRST, turns)
    assert fs.pending() == [] and fs.history() == []


def test_a_run_killed_mid_way_resumes_from_its_draft(
    fs: FlowState, neo4j_settings: Neo4jSettings, tmp_path: Path
) -> None:
    request_id, handle = crash("adk", neo4j_settings, fs.namespace, tmp_path)
    [left] = fs.pending()
    assert left.request_id == request_id
    memory = FlowStatePlugin(fs)
    state = memory.resuming(request_id, handle)
    model = run(memory, "Go on", [sc.RESUMED_ANSWER], state=state)
    sc.resumed_as_left(fs, request_id, model.prompts[0])


def test_the_memory_service_searches_the_namespace_and_ingests_nothing(fs: FlowState) -> None:
    memory = FlowStatePlugin(fs)
    run(memory, sc.FIRST, list(sc.REQUESTS[0][1]))
    service = FlowStateMemoryService(fs)
    found = asyncio.run(service.search_memory(app_name="other", user_id="bob", query="budget"))
    [entry] = found.memories
    assert entry.id == "r1.budget" and entry.content.parts is not None
    assert entry.content.parts[0].text == "r1.budget [constraint] Hotel budget 150 EUR a night"
    assert sc.BUDGET_CONTENT not in str(entry)  # its content opens with memory_reveal
    before = sc.graph(fs)
    session = asyncio.run(InMemorySessionService().create_session(app_name=APP, user_id=USER))
    asyncio.run(service.add_session_to_memory(session))
    assert sc.graph(fs) == before


def test_a_consequential_name_no_tool_has_fails_the_run_and_keeps_nothing(fs: FlowState) -> None:
    memory = FlowStatePlugin(fs, consequential={"book_hotl"})
    with pytest.raises(RuntimeError, match=r"consequential tools not among the agent's tools"):
        run(memory, sc.FIRST, ["Noted."])
    assert fs.pending() == [] and fs.history() == []


def test_the_agents_an_app_transfers_to_carry_the_memory_and_the_guard(fs: FlowState) -> None:
    """The consequential tool is a sub-agent's: the root agent's model calls run, and the
    sub-agent gets the index, the memory tools and the guard."""
    memory = FlowStatePlugin(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, list(sc.REQUESTS[0][1]))
    model = ScriptedLlm.of(
        [
            [("transfer_to_agent", {"agent_name": "booker"})],
            [("book_hotel", {"hotel_id": "H2", "cites": []})],
            "I need the budget first.",
        ]
    )
    booker = LlmAgent(name="booker", description="Books hotels.", model=model, tools=TOOLS)
    desk = LlmAgent(name="desk", instruction="Route requests.", model=model, sub_agents=[booker])
    adk = Runner(
        app=App(name=APP, root_agent=desk, plugins=[memory]),
        session_service=InMemorySessionService(),
        auto_create_session=True,
    )
    for _ in adk.run(user_id=USER, session_id="s1", new_message=message(sc.THIRD)):
        pass
    assert "memory_reveal" in model.tools[1] and "cites" in model.tools[1]["book_hotel"]["required"]
    assert "r1.budget [constraint]" in model.prompts[1]
    assert "denied (do not run book_hotel): book_hotel is consequential" in model.prompts[2]
    [_, second] = fs.history()
    assert second.answer == "I need the budget first."
