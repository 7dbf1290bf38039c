"""Reading outside a request (`fs.browse()`): the access rule requests follow, over what the
browse was shown: a state of a collapsed request opens only once the request is listed, an
observation only at a revealed relation's end, a search hit once shown, nothing forgotten."""

from __future__ import annotations

import pytest

from flowstate import FlowState
from flowstate.engine.session import Session
from flowstate.store import Repository, Store
from flowstate.store.drafts import of_ids
from tests.neo4j.engine_helpers import add

pytestmark = pytest.mark.neo4j


@pytest.fixture
def crowded(repo: Repository) -> Repository:
    """r1 holds a cited fact; 29 later requests push it out of the index's full lines."""
    first = Session.start(repo, "keep my passport")
    oid = first.observe("scan", {"page": 1}, "passport X1234567 (PT)")
    first.record([add("passport", "environment", "Passport kept", "X1234567", evidence=[oid])])
    first.commit("kept", "passport")
    for n in range(2, 31):
        later = Session.start(repo, f"request {n}")
        later.record([add(f"k{i}", summary=f"fact {i} of request {n} " * 3) for i in range(8)])
        later.commit("kept", f"request {n} with eight facts")
    return repo


def test_a_collapsed_request_is_listed_before_its_states_open(
    store: Store, crowded: Repository
) -> None:
    fs = FlowState(store, crowded.namespace)
    assert "r1.passport" not in fs.shown_index().state_ids
    browse = fs.browse()
    refused = browse.open(["r1.passport", "r1.o1"])
    assert refused.states == [] and refused.observations == []
    assert [m.split(":")[0] for m in refused.rejections] == ["access r1.passport", "access r1.o1"]
    assert all("unknown id" in m for m in refused.rejections)
    listed = browse.open(["r1"])
    assert [s.id for s in listed.requests["r1"]] == ["r1.passport"]
    [state] = browse.open(["r1.passport"]).states
    assert state.state.content == "X1234567"
    assert [(r.type, r.other) for r in state.relations] == [("EVIDENCED_BY", "r1.o1")]
    [observation] = browse.open(["r1.o1"]).observations
    assert observation.output == "passport X1234567 (PT)"


def test_search_hits_open_once_shown_and_forgotten_ones_never(
    store: Store, crowded: Repository
) -> None:
    fs = FlowState(store, crowded.namespace)
    browse = fs.browse()
    hits = [h.id for h in fs.search("passport")]
    assert hits == ["r1.passport"]
    browse.shown(hits)
    assert [r.state.id for r in browse.open(hits).states] == ["r1.passport"]
    fs.forget("r1.passport")
    browse.forgotten(of_ids({"r1.passport"}))
    again = browse.open(hits)
    assert again.states == [] and "unknown id" in again.rejections[0]
    other = fs.browse()  # another reader that was shown it, before the forget reached it
    other.shown(hits)
    gone = other.open(hits)
    assert gone.states == [] and "forgotten since it was shown" in gone.rejections[0]


def test_at_most_the_step_limit_of_ids_per_call(store: Store, crowded: Repository) -> None:
    browse = FlowState(store, crowded.namespace).browse()
    opened = browse.open([f"r30.k{i}" for i in range(8)] + ["r29.k0"])
    assert opened.states == [] and "at most 8 per step" in opened.rejections[0]


def test_what_was_opened_is_read_again_so_changes_made_elsewhere_show(
    store: Store, crowded: Repository, neo4j_settings
) -> None:
    browse = FlowState(store, crowded.namespace).browse()
    browse.open(["r1", "r30"])  # collapsed in the index: listed first
    browse.open(["r1.passport"])
    [fact] = browse.open(["r30.k0"]).states
    assert fact.superseded_by == []
    with Store.connect(neo4j_settings, ensure_schema=False) as elsewhere:  # another process
        other = FlowState(elsewhere, crowded.namespace)
        revising = other.begin("revise fact 0")
        revising.reveal(["r30"])
        revising.reveal(["r30.k0"])
        revising.record([add("k0", summary="fact 0, revised", relations=[
            {"type": "SUPERSEDES", "target": "r30.k0"}])])  # fmt: skip
        revising.commit("revised")
        other.forget("r1")
    [again] = browse.open(["r30.k0"]).states
    assert again.superseded_by == ["r31.k0"]
    gone = browse.open(["r1.passport"])  # this browse was never told of the forget
    assert gone.states == [] and "forgotten since it was shown" in gone.rejections[0]
    assert "r1.passport" not in browse.active.revealed  # no copy kept
    too_many = browse.open(["r30.k0", *[f"r29.k{i}" for i in range(8)]])
    assert too_many.states == [] and "at most 8 per step" in too_many.rejections[0]
    twice = browse.open(["r30.k0"] * 9 + ["r30.k1"])  # the same id counts once
    assert [s.state.id for s in twice.states] == ["r30.k0", "r30.k1"]
