"""A real provider through the whole loop: opt-in with `-m llm` and FLOWSTATE_TEST_MODEL
(any litellm model name, its provider's key in the environment as litellm expects)."""

from __future__ import annotations

import os

import pytest

from flowstate import FlowState
from flowstate.settings import Neo4jSettings

pytestmark = [pytest.mark.llm, pytest.mark.neo4j]
MODEL = os.environ.get("FLOWSTATE_TEST_MODEL")


@pytest.mark.skipif(MODEL is None, reason="set FLOWSTATE_TEST_MODEL to a litellm model name")
def test_a_real_model_records_a_fact_and_recalls_it_in_a_later_request(
    neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    assert MODEL is not None
    with FlowState.connect(settings=neo4j_settings, namespace=namespace) as fs:
        agent = fs.agent(MODEL)
        first = agent.run("Remember for later: our hotel budget is 137 EUR per night.")
        assert first.error is None and first.states_added  # it recorded typed state
        second = agent.run("What nightly hotel budget did I give you earlier?")
        assert "137" in second.answer
        assert second.revealed  # recalled from memory, not from the prompt's history
        fs.repository.forget_namespace(force=True)
