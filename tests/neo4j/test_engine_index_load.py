"""Loading the index from Neo4j fetches state lines only where they can be shown."""

from __future__ import annotations

import pytest

from flowstate.engine.index import HistoricalIndex
from flowstate.store import Repository
from tests.neo4j.conftest import Factory

pytestmark = pytest.mark.neo4j


@pytest.fixture
def many(repo: Repository, make: Factory) -> Repository:
    for seq in range(1, 121):
        repo.commit(make.bundle(seq, states=[f"fact_{k}" for k in range(5)]))
    return repo


@pytest.mark.parametrize("budget", [150, 600, 2_000, 50_000])
def test_loaded_index_renders_exactly_like_the_full_one(many: Repository, budget: int) -> None:
    full = HistoricalIndex(many.index(), budget).render()
    loaded_index = HistoricalIndex.load(many, budget)
    loaded = loaded_index.render()
    assert loaded.text == full.text
    assert (loaded.collapsed, loaded.state_ids, loaded.folded) == (
        full.collapsed,
        full.state_ids,
        full.folded,
    )
    fetched = sum(1 for r in loaded_index.requests if r.loaded)
    if budget < 50_000:
        assert fetched < 120  # old, collapsed requests were never fetched in full
    else:
        assert fetched == 120


def test_an_unloaded_request_still_opens(many: Repository) -> None:
    index = HistoricalIndex.load(many, 300)
    rendered = index.render()
    assert "r1" in rendered.collapsed
    assert [s.id for s in many.request_states("r1")][:2] == ["r1.fact_0", "r1.fact_1"]
    assert rendered.folded is not None and rendered.folded[0] == "r1"  # 120 one-liners > 300
    assert rendered.text.startswith(f"r1-{rendered.folded[1]}: ")
