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


def _opens(rendered, rid: str) -> bool:  # noqa: ANN001
    """Whether a request id opens: listed collapsed, or inside the folded range."""
    seqs = rendered.folded_seqs
    return rid in rendered.collapsed or (seqs is not None and seqs[0] <= int(rid[1:]) <= seqs[1])


@pytest.mark.parametrize("budget", [150, 600, 2_000, 50_000])
def test_loaded_index_renders_exactly_like_the_full_one(many: Repository, budget: int) -> None:
    full = HistoricalIndex(many.index(), budget).render()
    loaded_index = HistoricalIndex.load(many, budget)
    loaded = loaded_index.render()
    assert loaded.text == full.text
    assert (loaded.state_ids, loaded.folded) == (full.state_ids, full.folded)
    assert {f"r{i}" for i in range(1, 121) if _opens(loaded, f"r{i}")} == set(full.collapsed)
    fetched = len(loaded_index.requests)
    if budget <= 600:
        assert fetched < 120  # old requests were only counted, never fetched
    if budget == 50_000:
        assert fetched == 120


def test_an_unloaded_request_still_opens(many: Repository) -> None:
    index = HistoricalIndex.load(many, 300)
    rendered = index.render()
    assert "r1" not in index and _opens(rendered, "r1")
    assert [s.id for s in many.request_states("r1")][:2] == ["r1.fact_0", "r1.fact_1"]
    assert rendered.folded is not None and rendered.folded[0] == "r1"  # 120 one-liners > 300
    assert rendered.text.startswith(f"r1-{rendered.folded[1]}: ")


def test_an_agent_opens_a_request_that_was_never_loaded(
    many: Repository, store, namespace: str
) -> None:  # noqa: ANN001
    from tests.neo4j.engine_helpers import Harness, final, step, user_prompt

    h = Harness(store, namespace)
    agent, model = h.agent(
        [step(access=["r2"]), step(access=["r2.fact_3"]), step(action=final("found it"))],
        index_budget_tokens=300,
    )
    agent.refresh_index()  # as the request's start loads it
    assert "r2" not in agent.index  # older than the window: counted, not loaded
    result = agent.run("what was settled in r2?")
    assert result.answer == "found it" and result.rejections == 0
    assert "r2.fact_3 [environment]" in user_prompt(model, 1)  # listed by opening r2
    assert "content of r2.fact_3" in user_prompt(model, 2)


@pytest.mark.parametrize("budget", [150, 600, 2_000])
def test_with_requests_forgotten_the_loaded_index_renders_like_the_full_one(
    many: Repository, budget: int
) -> None:
    for rid in ("r1", "r3", "r60", "r120"):  # gaps at both ends and inside
        many.forget_request(rid)
    full = HistoricalIndex(many.index(), budget).render()
    loaded = HistoricalIndex.load(many, budget).render()
    assert loaded.text == full.text
    assert (loaded.state_ids, loaded.folded) == (full.state_ids, full.folded)


@pytest.mark.parametrize("budget", [300, 2_000])
def test_for_a_request_the_loaded_index_renders_like_the_full_one(
    repo: Repository, make: Factory, budget: int
) -> None:
    """The relevance search (a bounded full-text look) finds the old request whose states
    match the request's words, as ranking the whole namespace would."""
    for seq in range(1, 121):
        keys = [f"fact_{k}" for k in range(5)]
        states = [make.state(f"r{seq}", k) for k in keys]
        if seq == 4:
            states[2] = make.state("r4", "beacon", summary="the lighthouse keeper's beacon")
        repo.commit(make.bundle(seq, states=states))
    text = "who keeps the lighthouse beacon?"
    assert [h.id for h in repo.search(["lighthouse"])] == ["r4.beacon"]  # the index caught up
    full = HistoricalIndex(repo.index(), budget).render(text)
    index = HistoricalIndex.load(repo, budget)
    repo.run(index.load_matching(repo.ops, text, repo.stamp().committed))
    loaded = index.render(text)
    assert "r4.beacon" in full.state_ids
    assert loaded.text == full.text
    assert (loaded.state_ids, loaded.folded) == (full.state_ids, full.folded)
    if budget == 300:
        assert len(index.requests) < 120  # older requests were counted, not read
