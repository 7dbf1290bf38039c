"""Hostile or unlucky runs through each framework adapter, against the real Neo4j: what a run
leaves behind is what the session API and the agent loop would leave."""

from __future__ import annotations

from typing import Any

import pytest

from flowstate import FlowState, ScriptedModel, Transcript
from flowstate.integrations.adk import FlowStatePlugin
from flowstate.integrations.langchain import FlowStateMiddleware
from flowstate.integrations.openai_agents import FlowStateRunner
from flowstate.integrations.pydantic_ai import FlowStateCapability
from tests.integrations import scenario as sc
from tests.integrations import test_adk, test_langchain, test_openai_agents, test_pydantic_ai

pytestmark = pytest.mark.neo4j

FRAMEWORKS = ["pydantic_ai", "langchain", "openai_agents", "adk"]


def _run(framework: str, fs: FlowState, text: str, turns: list[sc.Turn]) -> list[str]:
    """One run; the prompts its model was called with."""
    script: Any
    if framework == "pydantic_ai":
        script = test_pydantic_ai.run(FlowStateCapability(fs), text, turns)
    elif framework == "langchain":
        script = test_langchain.run(FlowStateMiddleware(fs), text, turns)
    elif framework == "openai_agents":
        script = test_openai_agents.run(FlowStateRunner(fs), text, turns)
    else:
        script = test_adk.run(FlowStatePlugin(fs), text, turns)
    return list(script.prompts)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_oversized_final_answer_still_commits_what_the_run_recorded(
    framework: str, fs: FlowState
) -> None:
    turns: list[sc.Turn] = [[("memory_record", {"delta": [sc.BUDGET]})], "A" * 150_000]
    _run(framework, fs, sc.FIRST, turns)  # the run ends as the framework ends it
    assert fs.pending() == []
    [request] = fs.history()
    assert [s.id for s in fs.repository.request_states(request.id)] == ["r1.budget"]
    # The request keeps the answer cut, saying so.
    assert request.answer.startswith("AAAA")
    assert request.answer.endswith("... [cut: the answer had 150,000 characters]")


PAST = {
    "op": "add",
    "key": "zanzibar",
    "category": "constraint",
    "summary": "Zanzibar quokka safari dates",
    "content": "From 3 to 9 May, the quokka safari leaves at dawn",
}


def _past(fs: FlowState) -> None:
    """Six unrelated requests and one the next request's words point at."""
    for n in range(6):
        session = fs.begin(f"note {n}")
        session.record([{**PAST, "key": f"note{n}", "summary": f"Unrelated note {n}",
                         "content": f"nothing {n}"}])  # fmt: skip
        session.commit("ok", f"Note {n}")
    session = fs.begin("Zanzibar dates")
    session.record([PAST])
    session.commit("ok", "Zanzibar dates")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_first_instructions_carry_what_the_agent_loop_prefetches(
    framework: str, fs: FlowState
) -> None:
    _past(fs)
    text = "When does the zanzibar quokka safari leave?"
    # The agent loop's first prompt opens the state the request's words point at.
    with ScriptedModel.sequence(f"loop_{fs.namespace}", [
        {"action": {"type": "final", "answer": "At dawn", "summary": "Safari time"}},
    ]) as model:  # fmt: skip
        agent = fs.agent(model=model)
        agent.on_call = transcript = Transcript()
        assert agent.run(text).revealed == ["r7.zanzibar"]
    assert PAST["content"] in transcript.prompts[0][-1]["content"]
    # The adapter's first model call sees the same content, without asking for it.
    prompts = _run(framework, fs, text, ["At dawn."])
    assert PAST["content"] in prompts[0]
