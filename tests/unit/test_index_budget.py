"""The Historical State Index stays within its token budget and never drops a request."""

from __future__ import annotations

import re

import pytest

from flowstate.engine.index import HistoricalIndex
from flowstate.models import Category, Relation, RelationType
from flowstate.models.views import IndexRequest, IndexState


def _requests(n: int, states: int = 4) -> list[IndexRequest]:
    return [
        IndexRequest(
            id=f"r{i}",
            seq=i,
            summary=f"request {i} about topic {i % 7}",
            states=[
                IndexState(
                    id=f"r{i}.fact_{k}",
                    category=Category.ENVIRONMENT,
                    summary=f"fact {k} of request {i}, with a few more words",
                )
                for k in range(states)
            ],
        )
        for i in range(1, n + 1)
    ]


def _named_requests(text: str) -> set[str]:
    """Every request the text accounts for: listed, collapsed, or inside the folded range."""
    named = set(re.findall(r"^(r\d+):", text, re.M))
    for first, last in re.findall(r"^r(\d+)-r(\d+):", text, re.M):
        named |= {f"r{i}" for i in range(int(first), int(last) + 1)}
    return named


@pytest.mark.parametrize("n", [1, 3, 10, 40, 200, 1500])
def test_budget_holds_and_every_request_is_accounted_for(n: int) -> None:
    rendered = HistoricalIndex(_requests(n), budget_tokens=600).render()
    assert rendered.tokens <= 600
    assert _named_requests(rendered.text) == {f"r{i}" for i in range(1, n + 1)}
    for rid in _named_requests(rendered.text):
        assert rid in rendered.collapsed or f"{rid}.fact_0" in rendered.state_ids


def _long(n: int) -> list[IndexRequest]:
    """Requests whose summaries are as long as summaries may be (300 characters)."""
    words = "booked the riverside hotel near the old tram line for the whole group "
    return [
        IndexRequest(id=f"r{i}", seq=i, summary=(words * 10)[:300], states=[])
        for i in range(1, n + 1)
    ]


@pytest.mark.parametrize("n", [1, 2, 3, 8])
@pytest.mark.parametrize("budget", [50, 60, 80, 100, 150, 200, 300, 400])
def test_small_budgets_hold_even_with_the_longest_summaries(n: int, budget: int) -> None:
    """Three such requests rendered 566 tokens whatever the budget from 50 to 400."""
    rendered = HistoricalIndex(_long(n), budget_tokens=budget).render()
    assert rendered.tokens <= budget, rendered.text
    assert _named_requests(rendered.text) == {f"r{i}" for i in range(1, n + 1)}


def test_oldest_collapse_first_then_fold_into_a_range() -> None:
    few = HistoricalIndex(_requests(12), budget_tokens=600).render()
    assert "r1" in few.collapsed and "r12" not in few.collapsed and few.folded is None
    assert "r1: request 1 about topic 1  [4 states; collapsed: access r1]" in few.text
    many = HistoricalIndex(_requests(300), budget_tokens=600).render()
    assert many.folded is not None and many.folded[0] == "r1"
    assert many.text.startswith(f"r1-{many.folded[1]}: {many.folded[1][1:]} older requests")
    assert "r150" in many.collapsed  # accessible: PSA opens ids inside the range


def test_a_generous_budget_lists_everything() -> None:
    rendered = HistoricalIndex(_requests(5), budget_tokens=10_000).render()
    assert rendered.collapsed == frozenset() and rendered.folded is None
    assert len(rendered.state_ids) == 20


def test_rendering_is_cached_until_the_index_changes() -> None:
    index = HistoricalIndex(_requests(5), budget_tokens=10_000)
    first = index.render()
    assert index.render() is first
    index.apply_commit(
        _requests(6)[-1],
        [Relation(type=RelationType.SUPERSEDES, source="r6.fact_0", target="r2.fact_1")],
    )
    second = index.render()
    assert second is not first
    line = "r2.fact_1 [environment] fact 1 of request 2, with a few more words"
    assert f"{line}  (SUPERSEDED by r6.fact_0)" in second.text
