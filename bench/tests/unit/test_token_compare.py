"""The token suite's recall-matched comparison and prompt-cache-aware cost, on a short seeded
scenario (no database: the baselines' prompts are pure)."""

from __future__ import annotations

import json

import pytest

from flowstate_bench import embedding as emb
from flowstate_bench import token_compare as tc
from flowstate_bench.scenarios import scenario
from flowstate_bench.strategies import BASELINES, Prompted, tool_schemas
from flowstate_bench.token_report import cache_cost_table, recall_matched_table
from flowstate_bench.token_suite import recall
from tests.litellm_boundary import text_tokens

DEPTH = 12


@pytest.fixture(scope="module")
def turns():
    return scenario(DEPTH, 3)


@pytest.fixture(scope="module")
def swept(turns):
    return tc.sweep(turns, ks=(1, 2, 4, 32))


def test_the_sweep_embeds_through_litellm_once_per_turn_and_query(turns) -> None:
    before = emb.CALLS["hash-256"]
    tc.sweep(turns, ks=(1, 2))
    assert emb.CALLS["hash-256"] - before == 1 + 2  # the documents once, the queries per k


def test_recall_grows_with_k_and_k_past_the_history_is_full_context(turns, swept) -> None:
    full = BASELINES["full_context"](turns)
    result = tc.recall_matched(turns, {"full_context": full}, swept, DEPTH, recall)
    bm25 = result["curves"]["bm25"]
    assert bm25["1"]["recall"] <= bm25["2"]["recall"] <= bm25["4"]["recall"]
    assert bm25["1"]["prompt_tokens"] < bm25["4"]["prompt_tokens"]
    # k = 32 > 11 past turns: every turn is retrieved, so the prompt is full context's
    assert bm25["32"]["recall"] == 1.0
    assert bm25["32"]["prompt_tokens"] == pytest.approx(
        result["matched"]["full_context"]["prompt_tokens"]
    )


def test_the_recency_window_shows_exactly_the_last_k_turns(turns, swept) -> None:
    """No retrieval: turn i's prompt holds turns i-k..i-1 and nothing older; no extra call."""
    from flowstate_bench.strategies import turn_messages

    window = swept["recency_window"][2]
    for i, run in enumerate(window):
        shown = "\n".join(m["content"] for m in run.prompts[0])
        for j, past in enumerate(turns[:i]):
            inside = max(0, i - 2) <= j
            assert (turn_messages(past)[0]["content"] in shown) is inside, (i, j)
        assert not run.extra_prompts
    # The scenario's facts come from 1 to 4 requests back, so the last 4 turns hold them all.
    result = tc.recall_matched(turns, {}, swept, DEPTH, recall)
    assert result["curves"]["recency_window"]["4"]["recall"] == 1.0


def test_the_matched_row_is_the_smallest_k_reaching_the_best_recall(turns, swept) -> None:
    result = tc.recall_matched(turns, {}, swept, DEPTH, recall)
    for name, curve in result["curves"].items():
        m = result["matched"][name]
        best = max(p["recall"] for p in curve.values())
        smaller = [int(k) for k, p in curve.items() if int(k) < m["k"]]
        assert m["recall"] == best and m["reached"] is (best >= 1.0)
        assert all(curve[str(k)]["recall"] < best for k in smaller), name


def _prompted(*prompts: list[dict[str, str]]) -> Prompted:
    return Prompted.of([list(p) for p in prompts], replies=["cat" + " cat" * 6] * len(prompts))


def test_cache_cost_by_hand() -> None:
    """Under the real rules: a prefix of tool schema and system message shared by every
    call is never cached below 1,024 tokens; above, from the second call on, in steps of 128."""
    tool = text_tokens(json.dumps(tool_schemas()[0], separators=(",", ":")), "gpt-4o")
    for size in (600, 1_500):
        system = {"role": "system", "content": "cat" + " cat" * (size - 1)}
        a = [system, {"role": "user", "content": "first question"}]
        b = [*a, {"role": "assistant", "content": "answer"}]
        costs = tc.call_costs(
            [_prompted(a, b), _prompted([system, {"role": "user", "content": "x"}])]
        )
        (first, second), (third,) = costs
        assert first.cached == 0 and first.completion == 7
        # the third shares the tool schema and the system message (3 + 1 + size tokens)
        assert second.shared > third.shared == tool + 4 + size
        assert third.cached == (0 if tool + 4 + size < 1_024 else (tool + 4 + size) // 128 * 128)
        figures = tc.cache_costs(costs, (0.1, 0.5))
        calls = [first, second, third]
        assert figures["tokens"] == pytest.approx(sum(c.tokens + 7 for c in calls) / 2, abs=0.1)
        assert figures["effective_tokens"]["10%"] == pytest.approx(
            sum(c.tokens - 0.9 * c.cached + 7 for c in calls) / 2, abs=0.1
        )
        assert figures["effective_tokens"]["50%"] >= figures["effective_tokens"]["10%"]


def test_append_only_full_context_caches_better_than_a_summary(turns) -> None:
    costs = {name: tc.call_costs(build(turns)) for name, build in BASELINES.items()}
    table = tc.cache_table(costs, DEPTH)
    assert table["full_context"]["cached_share"] > table["rolling_summary"]["cached_share"]
    assert table["full_context"]["ratio_to_full_context"] == {
        "10%": 1.0, "50%": 1.0, "breakpoints": 1.0
    }  # fmt: skip
    # the cache only ever lowers what a strategy pays, and completions are counted in full
    for figures in table.values():
        assert figures["effective_tokens"]["10%"] <= figures["tokens"]
        assert figures["tokens"] == pytest.approx(
            figures["prompt_tokens"] + figures["completion_tokens"], abs=0.2
        )
        assert figures["completion_tokens"] > 0


def test_the_report_tables_render(turns, swept) -> None:
    full = BASELINES["full_context"](turns)
    tokens = {
        "recall_matched": {
            str(DEPTH): tc.recall_matched(turns, {"full_context": full}, swept, DEPTH, recall)
        },
        "cache": {str(DEPTH): tc.cache_table({"full_context": tc.call_costs(full)}, DEPTH)},
    }
    matched = "\n".join(recall_matched_table(tokens))
    assert "| 12 | Full context | - |" in matched and "BM25 top-k" in matched
    assert "automatic cache, read at 10%" in "\n".join(cache_cost_table(tokens))


def test_the_far_back_variant_needs_facts_a_short_window_does_not_hold() -> None:
    far = scenario(30, 3, reach=None)
    assert any(t.seq - f.seq > 4 for t in far for f in t.needs)
    result = tc.recall_matched(far, {}, tc.sweep(far, ks=(4, 32)), 30, recall)
    assert result["curves"]["recency_window"]["4"]["recall"] < 1.0
    assert result["curves"]["recency_window"]["32"]["recall"] == 1.0  # the whole history
