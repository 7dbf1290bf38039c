"""The OpenAI Agents SDK runner, run by the SDK's own `Runner` (its `ScriptedModel`, a `Model`
returning scripted responses, plays the model) against the real Neo4j: a run is one request,
its memory tools follow the session's rules, consequential tools pass FlowState's guard
through a tool input guardrail, and what is stored is what the session API stores for the
same steps."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, FunctionTool, RunConfig, function_tool
from agents.testing import ModelCall, ScriptedModel, assistant_message, function_call

from flowstate import AsyncFlowState, FlowState, UsageError
from flowstate.integrations.openai_agents import FlowStateRunner
from flowstate.settings import Neo4jSettings
from tests.integrations import scenario as sc
from tests.integrations.crash_worker import crash

pytestmark = pytest.mark.neo4j

TOOLS: list[Any] = [function_tool(sc.search_hotels), function_tool(sc.book_hotel)]
OFFLINE = RunConfig(tracing_disabled=True)  # no trace export: the tests run offline


class Script:
    """The SDK's scripted model over a scenario's turns, and what each call was prompted with
    (the instructions and the input items, as text) and offered (each tool's parameters)."""

    def __init__(self, turns: list[sc.Turn]) -> None:
        self.model = ScriptedModel([_step(n, turn) for n, turn in enumerate(turns)])

    @property
    def prompts(self) -> list[str]:
        return [_prompt(call) for call in self.model.calls]

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [
            {t.name: t.params_json_schema for t in call.tools if isinstance(t, FunctionTool)}
            for call in self.model.calls
        ]

    def agent(self, tools: list[Any] = TOOLS) -> Agent[Any]:
        return Agent(name="travel", instructions="Plan trips.", model=self.model, tools=tools)


def _step(n: int, turn: sc.Turn) -> list[Any]:
    if isinstance(turn, str):
        return [assistant_message(turn)]
    return [function_call(name, args, call_id=f"c{n}_{i}") for i, (name, args) in enumerate(turn)]


def _prompt(call: ModelCall) -> str:
    items: list[Any] = [{"content": call.input}] if isinstance(call.input, str) else call.input
    texts = [call.system_instructions or ""]
    for item in items:
        for key in ("content", "output", "arguments"):
            if isinstance(item.get(key), str):
                texts.append(item[key])
    return "\n".join(texts)


def run(memory: FlowStateRunner, text: str, turns: list[sc.Turn]) -> Script:
    script = Script(turns)
    memory.run_sync(script.agent(), text, run_config=OFFLINE)
    return script


@pytest.mark.parametrize("front", ["sync", "async", "async_over_sync"])
def test_three_requests_store_what_the_session_api_stores(
    front: str, fs: FlowState, twin: FlowState, neo4j_settings: Neo4jSettings
) -> None:
    scripts: list[Script] = []
    if front == "sync":  # run_sync over a FlowState
        memory = FlowStateRunner(fs, consequential={"book_hotel"})
        scripts = [run(memory, text, turns) for text, turns in sc.REQUESTS]
    else:

        async def main() -> None:
            async with await AsyncFlowState.connect(
                settings=neo4j_settings, namespace=fs.namespace
            ) as afs:
                memory = FlowStateRunner(
                    afs if front == "async" else fs, consequential={"book_hotel"}
                )
                for text, turns in sc.REQUESTS:
                    script = Script(turns)
                    await memory.run(script.agent(), text, run_config=OFFLINE)
                    scripts.append(script)

        asyncio.run(main())

    third = scripts[2]
    sc.third_request_as_the_session_api(third.prompts, third.tools[0], fs, twin)
    assert "Plan trips.\n\n# Memory (FlowState)" in third.prompts[0]


def test_a_hostile_model_is_refused_with_the_reason_and_changes_nothing(fs: FlowState) -> None:
    memory = FlowStateRunner(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, sc.REQUESTS[0][1])
    told = run(memory, sc.HOSTILE_TEXT, list(sc.HOSTILE)).prompts[1:]
    sc.hostile_refused(fs, told)


def test_arguments_that_are_not_json_are_refused(fs: FlowState) -> None:
    memory = FlowStateRunner(fs, consequential={"book_hotel"})
    script = Script(
        [
            [("memory_record", "not json")],  # type: ignore[list-item]
            [("book_hotel", "[1, 2]")],  # type: ignore[list-item]
            "Nothing done.",
        ]
    )
    memory.run_sync(script.agent(), sc.FIRST, run_config=OFFLINE)
    told = script.prompts
    assert "arguments must be a JSON object" in told[1]
    assert told[2].count("arguments must be a JSON object") == 2
    exported = [json.loads(line) for line in fs.export_jsonl()]
    assert [r["kind"] for r in exported if r["kind"] in {"state", "decision"}] == []


def test_parallel_tool_calls_are_each_kept_and_each_guarded(fs: FlowState) -> None:
    memory = FlowStateRunner(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, sc.REQUESTS[0][1])
    shown = run(memory, sc.PARALLEL_TEXT, list(sc.PARALLEL)).prompts[2]
    sc.parallel_each_kept_and_guarded(fs, shown)


def test_a_failed_run_is_discarded(fs: FlowState) -> None:
    memory = FlowStateRunner(fs)
    script = Script([[("memory_record", {"delta": [sc.BUDGET]})]])
    script.model.enqueue(RuntimeError("the provider went away"))
    with pytest.raises(RuntimeError, match="the provider went away"):
        memory.run_sync(script.agent(), sc.FIRST, run_config=OFFLINE)
    assert fs.pending() == [] and fs.history() == []


def test_a_run_killed_mid_way_resumes_from_its_draft(
    fs: FlowState, neo4j_settings: Neo4jSettings, tmp_path: Path
) -> None:
    request_id, handle = crash("openai_agents", neo4j_settings, fs.namespace, tmp_path)
    [left] = fs.pending()
    assert left.request_id == request_id
    memory = FlowStateRunner(fs)
    script = Script([sc.RESUMED_ANSWER])
    memory.resuming(request_id, handle).run_sync(script.agent(), "Go on", run_config=OFFLINE)
    sc.resumed_as_left(fs, request_id, script.prompts[0])


def test_the_callers_agent_is_left_as_it_is(fs: FlowState) -> None:
    memory = FlowStateRunner(fs, consequential={"book_hotel"})
    script = Script(sc.REQUESTS[0][1])
    agent = script.agent()
    memory.run_sync(agent, sc.FIRST, run_config=OFFLINE)
    assert agent.instructions == "Plan trips." and agent.tools == TOOLS
    assert "cites" not in TOOLS[1].params_json_schema["properties"]
    assert TOOLS[1].tool_input_guardrails is None


def test_a_consequential_name_no_tool_has_is_refused_before_anything_begins(
    fs: FlowState,
) -> None:
    memory = FlowStateRunner(fs, consequential={"book_hotl"})
    with pytest.raises(UsageError, match=r"consequential tools not among the agent's"):
        run(memory, sc.FIRST, ["Noted."])
    assert fs.pending() == [] and fs.history() == []


def test_the_agents_a_run_hands_off_to_carry_the_memory_and_the_guard(fs: FlowState) -> None:
    """The consequential tool is a handoff target's: it gets the index, the memory tools and
    the guard."""
    memory = FlowStateRunner(fs, consequential={"book_hotel"})
    run(memory, sc.FIRST, sc.REQUESTS[0][1])
    script = Script(
        [
            [("transfer_to_booker", {})],
            [("book_hotel", {"hotel_id": "H2", "cites": []})],
            "I need the budget first.",
        ]
    )
    booker = Agent(name="booker", instructions="Book hotels.", model=script.model, tools=TOOLS)
    desk = Agent(name="desk", instructions="Route.", model=script.model, handoffs=[booker])
    memory.run_sync(desk, sc.THIRD, run_config=OFFLINE)
    assert (
        "memory_reveal" in script.tools[1] and "cites" in script.tools[1]["book_hotel"]["required"]
    )
    assert "Book hotels.\n\n# Memory (FlowState)" in script.prompts[1]
    assert "denied (do not run book_hotel): book_hotel is consequential" in script.prompts[2]
    [_, second] = fs.history()
    assert second.answer == "I need the budget first."
    assert desk.handoffs == [booker] and booker.tools == TOOLS


def test_a_run_paused_for_approval_goes_on_in_the_same_request(fs: FlowState) -> None:
    @function_tool(needs_approval=True)
    def pay(amount: int) -> str:
        """Pay an amount."""
        return f"paid {amount}"

    began: list[tuple[str, str]] = []
    memory = FlowStateRunner(
        fs, on_begin=lambda request_id, handle: began.append((request_id, handle))
    )
    script = Script([[("pay", {"amount": 145})], "Paid 145 EUR."])
    agent = script.agent([pay])
    paused = memory.run_sync(agent, "Pay the hotel", run_config=OFFLINE)
    [waiting] = paused.interruptions
    [left] = fs.pending()  # open, not committed, not discarded
    assert fs.history() == [] and [left.request_id] == [began[0][0]]
    state = paused.to_state()
    state.approve(waiting)
    memory.resuming(*began[0]).run_sync(agent, state, run_config=OFFLINE)
    assert "paid 145\n[kept as r1.o1: cite it as evidence]" in script.prompts[1]
    [request] = fs.history()
    assert (request.id, request.text, request.answer) == ("r1", "Pay the hotel", "Paid 145 EUR.")
    assert len(began) == 1 and fs.pending() == []


def test_a_list_input_begins_the_request_with_the_last_user_message(fs: FlowState) -> None:
    memory = FlowStateRunner(fs)
    script = Script(["Noted."])
    conversation: list[Any] = [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi, how can I help?"},
        {"role": "user", "content": [{"type": "input_text", "text": sc.FIRST}]},
    ]
    memory.run_sync(script.agent(), conversation, run_config=OFFLINE)
    assert [r.text for r in fs.history()] == [sc.FIRST]


@pytest.mark.parametrize("outcome", ["complete", "failed"])
def test_a_streamed_run_commits_when_its_events_are_read_and_discards_when_it_fails(
    outcome: str, fs: FlowState
) -> None:
    memory = FlowStateRunner(fs, consequential={"book_hotel"})
    turns: list[Any] = list(sc.REQUESTS[0][1])
    script = Script(turns if outcome == "complete" else turns[:1])
    if outcome == "failed":
        script.model.enqueue(RuntimeError("the provider went away"))

    async def main() -> list[str]:
        kinds: list[str] = []
        async with memory.run_streamed(script.agent(), sc.FIRST, run_config=OFFLINE) as result:
            async for event in result.stream_events():
                kinds.append(event.type)
        return kinds

    if outcome == "failed":
        with pytest.raises(RuntimeError, match="the provider went away"):
            asyncio.run(main())
        assert fs.pending() == [] and fs.history() == []
        return
    assert "run_item_stream_event" in asyncio.run(main())
    [request] = fs.history()
    assert (request.text, request.answer, request.summary) == (sc.FIRST, "Noted.", "Hotel budget")
    assert fs.reveal(["r1.budget"])[0].state.content == sc.BUDGET_CONTENT


def test_a_streamed_run_whose_reader_raises_is_cancelled_and_discarded(fs: FlowState) -> None:
    memory = FlowStateRunner(fs)
    script = Script([[("memory_record", {"delta": [sc.BUDGET]})], "Noted."])

    async def main() -> None:
        async with memory.run_streamed(script.agent(), sc.FIRST, run_config=OFFLINE) as result:
            async for event in result.stream_events():
                if event.type == "run_item_stream_event":
                    raise ValueError("the reader gave up")

    with pytest.raises(ValueError, match="the reader gave up"):
        asyncio.run(main())
    assert fs.pending() == [] and fs.history() == []
