"""The pydantic-ai capability, run by pydantic-ai itself (`FunctionModel` scripts the model)
against the real Neo4j: a run is one request, its memory tools follow the session's rules,
consequential tools pass FlowState's guard, and what is stored is what the session API stores
for the same steps."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from flowstate import AsyncFlowState, FlowState, UsageError
from flowstate.integrations.pydantic_ai import FlowStateCapability
from flowstate.settings import Neo4jSettings
from tests.integrations import scenario as sc
from tests.integrations.crash_worker import crash

pytestmark = pytest.mark.neo4j


class Script:
    """A scripted model: each turn's tool calls or final text, in order, and what every call
    was prompted with (the instructions and the messages, as text)."""

    def __init__(self, turns: list[sc.Turn]) -> None:
        self.turns = list(turns)
        self.prompts: list[str] = []
        self.tools: list[dict[str, Any]] = []

    def model(self) -> FunctionModel:
        return FunctionModel(self._reply)

    def _reply(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts = [str(getattr(p, "content", "")) for msg in messages for p in msg.parts]
        self.prompts.append("\n".join([info.instructions or "", *parts]))
        self.tools.append({t.name: t.parameters_json_schema for t in info.function_tools})
        turn = self.turns.pop(0)
        if isinstance(turn, str):
            return ModelResponse(parts=[TextPart(turn)])
        n = len(self.prompts)
        return ModelResponse(
            parts=[
                ToolCallPart(name, args, tool_call_id=f"c{n}_{i}")
                for i, (name, args) in enumerate(turn)
            ]
        )


def agent(memory: FlowStateCapability) -> Agent[None, str]:
    return Agent(tools=[sc.search_hotels, sc.book_hotel], capabilities=[memory])


def run(memory: FlowStateCapability, text: str, turns: list[sc.Turn]) -> Script:
    script = Script(turns)
    agent(memory).run_sync(text, model=script.model())
    return script


@pytest.mark.parametrize("front", ["sync", "async"])
def test_three_requests_store_what_the_session_api_stores(
    front: str, fs: FlowState, twin: FlowState, neo4j_settings: Neo4jSettings
) -> None:
    scripts: list[Script] = []
    if front == "sync":  # run_sync over a FlowState: its calls in worker threads
        memory = FlowStateCapability(fs, consequential={"book_hotel"})
        for text, turns in sc.REQUESTS:
            scripts.append(run(memory, text, turns))
    else:

        async def main() -> None:
            async with await AsyncFlowState.connect(
                settings=neo4j_settings, namespace=fs.namespace
            ) as afs:
                memory = FlowStateCapability(afs, consequential={"book_hotel"})
                for text, turns in sc.REQUESTS:
                    script = Script(turns)
                    await agent(memory).run(text, model=script.model())
                    scripts.append(script)

        asyncio.run(main())

    sc.third_request_as_the_session_api(scripts[2].prompts, scripts[2].tools[0], fs, twin)


def test_a_hostile_model_is_refused_with_the_reason_and_changes_nothing(fs: FlowState) -> None:
    memory = FlowStateCapability(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, sc.REQUESTS[0][1])
    told = run(memory, sc.HOSTILE_TEXT, list(sc.HOSTILE)).prompts[1:]
    sc.hostile_refused(fs, told)


def test_parallel_tool_calls_are_each_kept_and_each_guarded(fs: FlowState) -> None:
    memory = FlowStateCapability(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, sc.REQUESTS[0][1])
    shown = run(memory, sc.PARALLEL_TEXT, list(sc.PARALLEL)).prompts[2]
    sc.parallel_each_kept_and_guarded(fs, shown)


def test_a_failed_run_is_discarded(fs: FlowState) -> None:
    memory = FlowStateCapability(fs)

    def broken(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) > 1:
            raise RuntimeError("the provider went away")
        return ModelResponse(parts=[ToolCallPart("memory_record", {"delta": [sc.BUDGET]})])

    with pytest.raises(RuntimeError, match="the provider went away"):
        agent(memory).run_sync(sc.FIRST, model=FunctionModel(broken))
    assert fs.pending() == [] and fs.history() == []


def test_a_run_killed_mid_way_resumes_from_its_draft(
    fs: FlowState, neo4j_settings: Neo4jSettings, tmp_path: Path
) -> None:
    request_id, handle = crash("pydantic_ai", neo4j_settings, fs.namespace, tmp_path)
    [left] = fs.pending()
    assert left.request_id == request_id
    memory = FlowStateCapability(fs)
    script = Script([sc.RESUMED_ANSWER])
    agent(memory).run_sync(
        "Go on", model=script.model(), capabilities=[memory.resuming(request_id, handle)]
    )
    sc.resumed_as_left(fs, request_id, script.prompts[0])


def test_a_consequential_name_no_tool_has_fails_the_run_and_keeps_nothing(fs: FlowState) -> None:
    memory = FlowStateCapability(fs, consequential={"book_hotl"})
    with pytest.raises(UsageError, match=r"consequential tools not among the agent's tools"):
        run(memory, sc.FIRST, ["Noted."])
    assert fs.pending() == [] and fs.history() == []
