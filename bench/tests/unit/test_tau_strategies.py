"""The baseline loops, the users and the policy wrapper, driven by scripted models through
litellm (no database needed)."""

from __future__ import annotations

import itertools

import pytest

from flowstate.engine.prompt import PROTOCOL, Prompt, PromptPart
from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate_bench.tau.data import Scenario
from flowstate_bench.tau.mock import MockEnv
from flowstate_bench.tau.runner import converse
from flowstate_bench.tau.strategies import (
    SUMMARY_SYSTEM,
    TOOL_RESULT,
    BM25Retrieval,
    FullContext,
    RollingSummary,
    policy_part,
)
from flowstate_bench.tau.users import GREETING, LLMUser, ScriptedUser

_names = itertools.count()


@pytest.fixture
def scripted():
    made: list[ScriptedModel] = []

    def make(outputs):
        name = f"tau-unit-{next(_names)}"
        model = ScriptedModel.policy(name, outputs) if callable(outputs) else None
        model = model or ScriptedModel.sequence(name, outputs)
        made.append(model)
        return model

    yield make
    for model in made:
        unregister(model.name)


def _env() -> MockEnv:
    return MockEnv({"tasks": {}, "users": {"u1": {"user_id": "u1", "name": "Ann", "tasks": []}}})


def tool(name: str, **arguments: object) -> dict:
    return {"type": "tool", "name": name, "arguments": arguments}


def final(answer: str) -> dict:
    return {"type": "final", "answer": answer}


def _prompt(model: ScriptedModel, call: int) -> str:
    return "\n".join(m["content"] for m in model.calls[call].messages)


def test_full_context_replays_every_past_turn_with_tool_results(scripted) -> None:
    model = scripted(
        [tool("create_task", user_id="u1", title="Budget review"), final("Created."), final("Ok")]
    )
    env = _env()
    agent = FullContext(model.client(), env.tools(), "POLICY TEXT")
    first = agent.respond("Create a task 'Budget review' for u1")
    assert first.answer == "Created." and first.usage.calls == 2 and first.usage.total_tokens > 0
    agent.respond("Thanks")
    later = _prompt(model, 2)
    assert "POLICY TEXT" in later and "Create a task 'Budget review'" in later
    assert f"{TOOL_RESULT} create_task [ok]" in later and '"task_id": "task_1"' in later
    assert env.calls[0].name == "create_task" and env.db["tasks"]["task_1"]["status"] == "pending"


def test_a_tool_error_and_an_unusable_reply_are_told_to_the_model(scripted) -> None:
    model = scripted([tool("create_task", user_id="nobody", title="x"), "not json", final("no")])
    agent = FullContext(model.client(), _env().tools(), "P")
    assert agent.respond("go").answer == "no"
    assert "[error]: Error: user nobody not found" in _prompt(model, 1)
    assert "Unusable reply" in _prompt(model, 2)


def test_bm25_shows_only_the_top_k_past_messages(scripted) -> None:
    turns = [f"note {i}: the weather is mild" for i in range(6)]
    turns[2] = "my membership number is ZX-42 for the lounge"
    model = scripted([final("noted")] * 6 + [final("It is ZX-42.")])
    agent = BM25Retrieval(model.client(), [], "P", top_k=2)
    for text in turns:
        agent.respond(text)
    agent.respond("what is my lounge membership number?")
    prompt = _prompt(model, 6)
    assert "(2 of 12)" in prompt and "ZX-42 for the lounge" in prompt
    assert "note 5" not in prompt


def test_rolling_summary_costs_one_extra_call_per_turn_and_is_shown_next(scripted) -> None:
    def policy(messages):
        if SUMMARY_SYSTEM in messages[0]["content"]:
            return {"summary": "User Ann wants task 'Budget review'."}
        return final("ok")

    model = scripted(policy)
    agent = RollingSummary(model.client(), [], "P")
    first = agent.respond("I'm Ann, create 'Budget review'")
    # the summary's call is the memory's, reported apart from the agent's
    assert first.extra_calls == 1 and first.usage.calls == 1 and first.memory_usage.calls == 1
    agent.respond("go on")
    prompt = _prompt(model, 2)
    assert "# Summary of the conversation so far\nUser Ann wants task 'Budget review'." in prompt
    assert "I'm Ann" not in prompt  # only the summary carries the first turn


def test_the_policy_goes_in_front_of_the_engines_system_message() -> None:
    engine = Prompt((PromptPart(PROTOCOL, "engine protocol", role="system"),))
    sent = policy_part("# Airline Agent Policy")(engine).messages()[0]["content"]
    assert sent == "# Domain policy\n# Airline Agent Policy\n\nengine protocol"


def test_llm_user_follows_guidelines_and_stops_on_the_token(scripted) -> None:
    model = scripted([{"message": "Hi, I'm Emma."}, {"message": "Thanks! ###STOP###"}])
    scenario = Scenario(reason_for_call="Cancel EHGLP3", known_info="You are Emma Kim.")
    user = LLMUser(model.client(), scenario, "GUIDELINES: use ###STOP###")
    assert user.next(GREETING) == "Hi, I'm Emma."
    system = model.calls[0].messages[0]["content"]
    assert "GUIDELINES" in system and "Reason for call:\nCancel EHGLP3" in system
    assert model.calls[0].messages[1] == {"role": "user", "content": GREETING}
    assert user.next("Done, it is cancelled.") is None and user.ended == "stop"
    assert model.calls[1].messages[2] == {"role": "assistant", "content": "Hi, I'm Emma."}
    assert user.usage.calls == 2


def test_llm_user_transfer_token_ends_the_conversation(scripted) -> None:
    model = scripted(["###TRANSFER###"])  # plain text, not JSON: taken as the message
    user = LLMUser(model.client(), Scenario(), "G")
    assert user.next("YOU ARE BEING TRANSFERRED") is None and user.ended == "transfer"


def test_converse_sends_each_user_turn_as_one_request(scripted) -> None:
    model = scripted([final("a1"), final("a2")])
    agent = FullContext(model.client(), [], "P")
    seen: list[int] = []
    answers, spent, ended = converse(agent, ScriptedUser(["one", "two"]), seen.append)
    assert answers == ["a1", "a2"] and seen == [0, 1] and ended == "stop"
    assert spent.usage.calls == 2 and spent.extra_calls == 0 and spent.memory.calls == 0
    endless = FullContext(scripted([final("x")] * 3).client(), [], "P")
    _, _, ended = converse(endless, ScriptedUser(["t"] * 5), max_turns=3)
    assert ended == "max_turns"
