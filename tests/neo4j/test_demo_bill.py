"""The demo's two bills are what reached litellm: FlowState's calls and the plain agent's
(native tool calls, its whole history, its tool definitions), each counted apart from
flowstate.tokens at the provider boundary (tests/litellm_boundary.py)."""

from __future__ import annotations

import uuid

import pytest

from flowstate.api import FlowState
from flowstate.demo.plain import PLAIN_SYSTEM
from flowstate.demo.runner import run_scripted_demo
from flowstate.demo.scenario import EXPECTED_TOTAL_EUR
from flowstate.store import Store
from tests.litellm_boundary import prompt_tokens, recording

pytestmark = pytest.mark.neo4j

BILLED_AS = "gpt-4o"  # scripted models are counted as a modern OpenAI model: o200k_base


def test_both_bills_equal_an_independent_count_of_what_reached_litellm(
    store: Store, namespace: str
) -> None:
    name = f"bill_{uuid.uuid4().hex[:8]}"
    with recording() as provider:
        report = run_scripted_demo(FlowState(store, namespace), name=name)
    plain = [c for c in provider.received if c.model == f"{name}-plain"]
    ours = [c for c in provider.received if c.model == name]
    assert len(ours) + len(plain) == len(provider.received)

    assert f"total {EXPECTED_TOTAL_EUR} EUR" in report.rows[-1].answer
    assert f"total {EXPECTED_TOTAL_EUR} EUR" in report.rows[-1].plain_answer
    assert len(ours) == report.flowstate.calls and len(plain) == report.plain.calls
    assert sum(prompt_tokens(c, BILLED_AS) for c in ours) == report.flowstate.prompt_tokens
    assert sum(prompt_tokens(c, BILLED_AS) for c in plain) == report.plain.prompt_tokens
    # The plain agent sends its tools as definitions and its history as chat messages,
    # tool calls and results included; FlowState sends no definitions.
    assert all(len(c.tools) == 5 and c.messages[0]["content"] == PLAIN_SYSTEM for c in plain)
    assert all(not c.tools for c in ours)
    last = plain[-1].messages
    assert sum(1 for m in last if m["role"] == "tool") == 5  # every earlier tool result
    assert sum(1 for m in last if m["role"] == "user") == 8  # every request
    # Nothing of the plain agent's replayed history reaches FlowState's prompts.
    assert all(not any(m["role"] == "tool" for m in c.messages) for c in ours)
