"""Which calls of a request show the whole Historical State Index (`index_on_later_calls`):
by default the first call only, later ones a line saying so, the states opened meanwhile
standing in the Active State with their summaries; or every call. A revealed state whose
index line is in the same prompt does not repeat its summary."""

from __future__ import annotations

import uuid

import pytest

from flowstate import AgentConfig, FlowState, ScriptedModel
from flowstate.engine.prompt import INDEX_HEADER, INDEX_SENT_ONCE, IndexResend
from flowstate.engine.protocol import INDEX_ONCE
from flowstate.engine.transcript import Transcript
from flowstate.errors import RequestInterrupted
from flowstate.llm.scripted import ScriptedFailure
from flowstate.store import Store
from tests.neo4j.engine_helpers import add, final, step

pytestmark = pytest.mark.neo4j

SUMMARY = "Deploy window for billing-api is Tuesday"
OTHER = "Owner of auth-service is Dana"


def _prompts(fs: FlowState, steps: list, config: AgentConfig | None = None) -> list[list[dict]]:
    with ScriptedModel.sequence(f"ir_{uuid.uuid4().hex[:8]}", steps) as model:
        agent = fs.agent(model.client(), config=config)
        agent.on_call = transcript = Transcript()
        result = agent.run("When is the deploy window of billing-api?")
    assert result.error is None and not result.rejections
    return [c.sent.messages for c in transcript.calls]


def _remember(fs: FlowState) -> None:
    fs.remember([add("deploy", summary=SUMMARY)], "deploy")
    fs.remember([add("owner", summary=OTHER)], "owner")


def test_later_calls_show_one_line_for_the_index_and_full_heads_for_what_was_opened(
    store: Store, namespace: str
) -> None:
    fs = FlowState(store, namespace)
    _remember(fs)
    first, later = _prompts(fs, [step(access=["r2.owner"]), step(action=final())])
    assert INDEX_ONCE.strip() in first[0]["content"] == later[0]["content"]
    user, next_user = first[-1]["content"], later[-1]["content"]
    assert f"  r1.deploy [environment] {SUMMARY}" in user and OTHER in user
    # Prefetched before the first call: its head leaves off what its index line says.
    revealed = user.split("## Revealed past states", 1)[1]
    assert "- r1.deploy\n  content: content of deploy" in revealed
    assert f"{INDEX_HEADER}\n{INDEX_SENT_ONCE}" in next_user
    assert "  r1.deploy [" not in next_user and "  r2.owner [" not in next_user
    revealed = next_user.split("## Revealed past states", 1)[1]
    assert f"- r1.deploy [environment] {SUMMARY}\n" in revealed
    assert f"- r2.owner [environment] {OTHER}\n" in revealed


def test_every_call_shows_the_whole_index_when_configured(store: Store, namespace: str) -> None:
    fs = FlowState(store, namespace)
    _remember(fs)
    config = AgentConfig(index_on_later_calls=IndexResend.EVERY_CALL)
    first, later = _prompts(fs, [step(access=["r2.owner"]), step(action=final())], config)
    assert INDEX_ONCE.strip() not in first[0]["content"]
    assert INDEX_SENT_ONCE not in later[-1]["content"]
    for messages in (first, later):
        assert f"  r1.deploy [environment] {SUMMARY}" in messages[-1]["content"]
    revealed = later[-1]["content"].split("## Revealed past states", 1)[1]
    assert "- r1.deploy\n" in revealed and "- r2.owner\n" in revealed
    assert SUMMARY not in revealed and OTHER not in revealed


def test_an_id_listed_at_the_first_call_still_opens_at_a_later_one(
    store: Store, namespace: str
) -> None:
    fs = FlowState(store, namespace)
    _remember(fs)
    calls = _prompts(
        fs,
        [step(), step(access=["r2.owner"]), step(action=final())],
        AgentConfig(prefetch_states=0),
    )
    assert len(calls) == 3
    assert f"- r2.owner [environment] {OTHER}\n" in calls[2][-1]["content"]


def test_a_resumed_request_shows_the_whole_index_at_its_first_call(
    store: Store, namespace: str
) -> None:
    fs = FlowState(store, namespace)
    _remember(fs)
    name = f"ir_{uuid.uuid4().hex[:8]}"
    with ScriptedModel.sequence(name, [step(), ScriptedFailure(400)]) as model:
        agent = fs.agent(model.client(), config=AgentConfig(prefetch_states=0))
        with pytest.raises(RequestInterrupted):
            agent.run("When is the deploy window of billing-api?")
    with ScriptedModel.sequence(f"{name}_b", [step(action=final())]) as model:
        agent = fs.agent(model.client(), config=AgentConfig(prefetch_states=0))
        agent.on_call = transcript = Transcript()
        resumed = agent.resume()
    assert resumed.error is None
    user = transcript.calls[0].sent.messages[-1]["content"]
    assert "Step 2 of" in user and f"  r1.deploy [environment] {SUMMARY}" in user
