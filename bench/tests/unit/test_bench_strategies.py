"""The baselines' prompts and the token figures computed from them (pure, no database)."""

from __future__ import annotations

import json

from flowstate.tokens import count_messages, count_tokens
from flowstate_bench.scenarios import scenario
from flowstate_bench.strategies import (
    BM25_K,
    SUMMARY_BUDGET_TOKENS,
    Prompted,
    bm25,
    full_context,
    rolling_summary,
    tool_call,
    tool_schemas,
)
from flowstate_bench.token_suite import depth_figures, recall

TURNS = scenario(30)


def _text(p: Prompted) -> str:
    return "\n".join(m["content"] for m in p.prompts[-1])


def test_full_context_carries_every_past_turn_verbatim() -> None:
    runs = full_context(TURNS)
    last = _text(runs[-1])
    assert all(t.tool_output in last and t.text in last for t in TURNS)
    assert [len(r.prompts) for r in runs] == [2] * len(TURNS)
    tokens = [r.prompt_tokens for r in runs]
    assert tokens == sorted(tokens)  # grows with every request


def test_full_context_recall_is_one() -> None:
    assert all(recall(t, p) in (None, 1.0) for t, p in zip(TURNS, full_context(TURNS), strict=True))


def test_bm25_keeps_at_most_k_past_turns() -> None:
    for turn, run in zip(TURNS, bm25(TURNS), strict=True):
        past = [t for t in TURNS[: turn.seq - 1] if t.tool_output in _text(run)]
        assert len(past) == min(BM25_K, turn.seq - 1)


def test_rolling_summary_costs_one_extra_call_and_stays_bounded() -> None:
    runs = rolling_summary(TURNS)
    assert all(len(r.extra_prompts) == 1 and r.extra_prompt_tokens > 0 for r in runs)
    for run in runs:
        state = run.prompts[0][1]["content"]
        assert state.startswith("Working state:")
        assert count_tokens(state) <= SUMMARY_BUDGET_TOKENS + 5
    assert runs[-1].prompt_tokens < full_context(TURNS)[-1].prompt_tokens


def test_rolling_summary_forgets_what_no_longer_fits() -> None:
    runs = rolling_summary(TURNS, budget=60)
    assert recall(TURNS[-1], runs[-1]) is not None
    figures = depth_figures(TURNS, runs)
    assert figures["recall"] < 1.0


def test_depth_figures_count_extra_calls_and_recall() -> None:
    figures = depth_figures(TURNS[:10], rolling_summary(TURNS)[:10])
    assert figures["llm_calls"] == 3 and figures["extra_llm_calls"] == 1
    assert figures["memory_write_calls"] == 1
    assert figures["recall"] == 1.0
    assert figures["last_request_tokens"] > 0 and figures["prompt_tokens"] > 0
    # The whole bill: prompt plus completion, the summariser's reply included.
    runs = rolling_summary(TURNS)[:10]
    completion = sum(count_tokens(t.answer) + count_tokens(tool_call(t)) for t in TURNS[:10])
    completion += sum(r.extra_completion_tokens for r in runs)
    assert figures["completion_tokens"] == round(completion / 10, 1)
    assert figures["tokens"] == round(figures["prompt_tokens"] + figures["completion_tokens"], 1)


def test_baselines_send_their_tool_as_a_compact_schema_beside_the_messages() -> None:
    run = full_context(TURNS[:1])[0]
    for sent in run.calls:
        assert sent.tools == tool_schemas() and "lookup_ticket" not in sent.messages[0]["content"]
    schema = json.dumps(tool_schemas()[0], separators=(",", ":"))
    assert run.prompt_tokens == sum(
        count_messages(s.messages) + count_tokens(schema) for s in run.calls
    )
