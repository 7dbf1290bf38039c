"""Prefetch, on by default: before a request's first call the engine opens the listed states
that best match the request's distinctive words, best first within a token budget; and a
request with one state and no SUMMARY is listed once, under its state's summary."""

from __future__ import annotations

import uuid

import pytest

from flowstate import AgentConfig, FlowState, ScriptedModel
from flowstate.engine.transcript import Transcript
from flowstate.store import Store
from tests.neo4j.engine_helpers import add, final, step

pytestmark = pytest.mark.neo4j


def _remember(fs: FlowState) -> None:
    fs.remember([add("deploy", summary="Deploy window for billing-api is Tuesday")], "deploy")
    fs.remember([add("owner", summary="Owner of auth-service is Dana")], "owner")
    fs.remember(
        [add("runbook", summary="Runbook for billing-api rollbacks", content="x" * 4_000)],
        "runbook",
    )


def _first_prompt(fs: FlowState, text: str, config: AgentConfig | None = None) -> str:
    with ScriptedModel.sequence(f"pf_{uuid.uuid4().hex[:8]}", [step(action=final())]) as model:
        agent = fs.agent(model.client(), config=config)
        agent.on_call = transcript = Transcript()
        agent.run(text)
    return transcript.calls[0].sent.messages[-1]["content"]


def test_a_request_sees_its_best_match_open_from_its_first_call(
    store: Store, namespace: str
) -> None:
    fs = FlowState(store, namespace)
    _remember(fs)
    prompt = _first_prompt(fs, "When is the deploy window of billing-api?")
    revealed = prompt.split("## Revealed past states", 1)[1]
    assert "r1.deploy" in revealed and "content of deploy" in revealed
    assert "r2.owner" not in revealed  # nothing of it matches
    # r3.runbook matches "billing-api" too, but its 4,000 characters exceed the budget.
    assert "r3.runbook" not in revealed


def test_prefetch_off_and_a_budget_that_fits(store: Store, namespace: str) -> None:
    fs = FlowState(store, namespace)
    _remember(fs)
    off = _first_prompt(fs, "Deploy window of billing-api?", AgentConfig(prefetch_states=0))
    assert "## Revealed past states" not in off
    wide = _first_prompt(
        fs, "The deploy window, and the runbook for rollbacks?", AgentConfig(prefetch_tokens=5_000)
    )
    revealed = wide.split("## Revealed past states", 1)[1]
    assert "r1.deploy" in revealed and "r3.runbook" in revealed


def test_prefetch_never_opens_a_neighbours_or_a_forgotten_state(
    store: Store, namespace: str
) -> None:
    fs, neighbour = FlowState(store, namespace), FlowState(store, f"{namespace}_n")
    try:
        neighbour.remember(
            [add("deploy", summary="Deploy window for billing-api is Friday")], "deploy"
        )
        fs.remember([add("deploy", summary="Deploy window for billing-api is Tuesday")], "deploy")
        fs.remember([add("other", summary="Lunch is at noon")], "lunch")
        fs.forget("r1.deploy")
        prompt = _first_prompt(fs, "When is the deploy window of billing-api?")
        assert "Friday" not in prompt and "Tuesday" not in prompt
        assert "## Revealed past states" not in prompt
        # The request's summary was its forgotten state's: it went with it.
        assert fs.history()[0].summary == "(r1.deploy forgotten)"
    finally:
        neighbour.repository.forget_namespace(force=True)


def test_a_one_state_request_without_summary_is_listed_once(store: Store, namespace: str) -> None:
    fs = FlowState(store, namespace)
    outputs = [
        step([add("budget", summary="Hotel budget 150 EUR")], action=final("Noted.")),
        step([add("a"), add("b")], action=final("Noted both.")),
    ]
    with ScriptedModel.sequence(f"one_{uuid.uuid4().hex[:8]}", outputs) as model:
        agent = fs.agent(model.client())
        agent.run("Our hotel budget is 150 EUR a night.")
        agent.run("Two things to note.")
    history = fs.history()
    assert history[0].summary == "Hotel budget 150 EUR"  # its one state's
    assert history[1].summary == "Two things to note."  # two states: the text, as before
    lines = fs.index().text.splitlines()
    assert lines[:2] == ["r1:", "  r1.budget [environment] Hotel budget 150 EUR"]
    assert lines[2] == "r2: Two things to note."


def test_an_expired_state_takes_the_summary_its_request_borrowed(
    store: Store, namespace: str
) -> None:
    from flowstate.safety.retention import RetentionPolicy

    fs = FlowState(store, namespace)
    fs.remember([add("code", "artifact", summary="Door code 4711")], "the door code")
    fs.remember([add("lunch", "preference", summary="Lunch at noon")], "lunch")
    fs.apply_retention(RetentionPolicy.parse('{"artifact": 0}'))
    assert [r.summary for r in fs.history()] == ["(r1.code expired)", "Lunch at noon"]
    assert "4711" not in fs.index().text


def test_a_short_content_is_read_off_its_index_line_not_prefetched(
    store: Store, namespace: str
) -> None:
    fs = FlowState(store, namespace)
    fs.remember([add("result", summary="Closed form of a_n", content="a_n = 2*3^n - 1")], "a_n")
    fs.remember([add("style", summary="Prefers boutique hotels", content="boutique")], "style")
    fs.remember([add("card", summary="Card on file", content="Card on file")], "card")
    fs.remember([add("balance", summary="Account balance 150 EUR", content="-150 EUR")], "bal")
    prompt = _first_prompt(fs, "Using the closed form of a_n, simplify log_3(a_n + 1)")
    assert "r1.result [environment] Closed form of a_n content: a_n = 2*3^n - 1" in prompt
    assert "## Revealed past states" not in prompt  # its line said it all: nothing to open
    assert "r2.style [environment] Prefers boutique hotels content: boutique\n" in prompt
    # A content that is its summary is not said twice; one that differs in a sign is shown.
    assert "r3.card [environment] Card on file\n" in prompt
    assert "r4.balance [environment] Account balance 150 EUR content: -150 EUR\n" in prompt
