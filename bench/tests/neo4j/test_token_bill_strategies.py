"""Every strategy of the token suite bills what reached litellm: its counted prompt tokens
(messages, tool definitions) and completion tokens equal an independent count of what
litellm handed the provider and what the provider answered (tests/litellm_boundary.py,
apart from FlowState's counter).

FlowState (the oracle and the reader) runs through litellm in the suite itself. The others
build their calls without a model; here each call is sent through litellm as built, answered
with the reply the strategy counts, and counted at the boundary."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from flowstate.llm._litellm import litellm
from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate.store import Store
from flowstate_bench import flowstate_strategy, token_compare
from flowstate_bench.scenarios import scenario
from flowstate_bench.strategies import BASELINES, Prompted
from tests.litellm_boundary import Recorder, prompt_tokens, recording, text_tokens

pytestmark = pytest.mark.neo4j

TURNS = scenario(8, 5)
BILLED_AS = "gpt-4o"  # o200k_base, as the suite counts


def _counted(runs: Sequence[Prompted]) -> tuple[list[int], list[int]]:
    """Prompt and completion tokens per call as the suite counts them, in sending order."""
    prompts = [c.tokens() for run in runs for c in [*run.calls, *run.extra]]
    completions = [n for run in runs for n in run.call_completions()]
    return prompts, completions


def _at_the_boundary(provider: Recorder) -> tuple[list[int], list[int]]:
    prompts = [prompt_tokens(call, BILLED_AS) for call in provider.received]
    return prompts, [text_tokens(reply, BILLED_AS) for reply in provider.replies]


def _replayed(runs: Sequence[Prompted]) -> Recorder:
    """Each call of `runs` sent through litellm as built, answered with its counted reply."""
    calls = [c for run in runs for c in [*run.calls, *run.extra]]
    replies = [r for run in runs for r in run.replies]
    assert len(replies) == len(calls) and all(replies)
    name = f"replay_{uuid.uuid4().hex[:8]}"
    model = ScriptedModel.sequence(name, replies)
    try:
        with recording() as provider:
            for sent in calls:
                extra: dict[str, Any] = {"tools": sent.tools} if sent.tools else {}
                litellm.completion(model=model.model, messages=sent.messages, **extra)
    finally:
        unregister(name)
    assert len(provider.received) == len(calls)
    return provider


@pytest.mark.parametrize("agent", flowstate_strategy.AGENTS)
def test_flowstate_counts_what_reached_litellm(store: Store, agent: str) -> None:
    with recording() as provider:
        run = flowstate_strategy.run(store, TURNS, agent_kind=agent, with_no_psa=False)
    counted = _counted(run.psa)
    assert len(counted[0]) == len(provider.received) >= 2 * len(TURNS)
    assert counted == _at_the_boundary(provider)
    assert all(n > 0 for n in counted[1])  # every step writes something


def test_flowstate_without_psa_counts_what_it_would_send(store: Store) -> None:
    runs = flowstate_strategy.run(store, TURNS).no_psa
    assert _counted(runs) == _at_the_boundary(_replayed(runs))


@pytest.mark.parametrize("name", sorted(BASELINES))
def test_each_baseline_counts_what_reaches_litellm(name: str) -> None:
    runs = BASELINES[name](TURNS)
    provider = _replayed(runs)
    assert _counted(runs) == _at_the_boundary(provider)
    # the tool goes as a native definition, which litellm hands the provider unchanged
    assert provider.received[0].tools == runs[0].calls[0].tools != []


@pytest.mark.parametrize("name", ["bm25", "embedding", "recency_window"])
def test_each_swept_strategy_counts_what_reaches_litellm(name: str) -> None:
    runs = token_compare.sweep(TURNS, ks=(2,))[name][2]
    assert _counted(runs) == _at_the_boundary(_replayed(runs))
