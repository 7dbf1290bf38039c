"""Requests running at once in one namespace, and the rules across them: a state is superseded
once (the second commit hears why and revises), a consequential call is judged on what is
committed at the moment of the decision, and a request hears at its next step what others
made stale. Through the session API and through the agent loop, against a real Neo4j."""

from __future__ import annotations

import pytest

from flowstate.engine.session import Session
from flowstate.errors import UsageError
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import (
    BUDGET,
    Harness,
    Shell,
    add,
    final,
    lowered,
    step,
    tool,
    user_prompt,
)

pytestmark = pytest.mark.neo4j


def _first(store: Store, namespace: str) -> None:
    Harness(store, namespace).run([step([BUDGET], action=final("noted", "Budget set"))])


def test_two_requests_run_at_once_and_commit_in_the_order_they_finish(
    store: Store, repo: Repository
) -> None:
    _first(store, repo.namespace)
    early, late = Session.start(repo, "first one"), Session.start(repo, "second one")
    assert (early.request_id, late.request_id) == ("r2", "r3")
    assert {r.request_id for r in repo.open_requests()} == {"r2", "r3"}
    late.record([add("note", summary="written by r3")])
    late.commit("done", "r3 first")
    early.record([add("note", summary="written by r2")])
    early.commit("done", "r2 second")
    assert [r.id for r in repo.index()] == ["r1", "r2", "r3"]
    assert repo.open_requests() == []


def test_a_second_supersession_of_one_state_is_refused_then_revised(
    store: Store, repo: Repository
) -> None:
    _first(store, repo.namespace)
    a, b = Session.start(repo, "budget 120"), Session.start(repo, "budget 100")
    for session in (a, b):
        session.reveal(["r1.budget"])
    assert a.record([lowered(120, "r1.budget")]).applied
    assert b.record([lowered(100, "r1.budget")]).applied  # neither knows of the other yet
    a.commit("lowered to 120", "Budget 120")
    with pytest.raises(UsageError, match="r1.budget is already superseded by r2.budget"):
        b.commit("lowered to 100", "Budget 100")
    assert b.request_id in {r.request_id for r in repo.open_requests()}  # kept, not lost
    # b hears it and sees the newer state in its index: it supersedes that one instead.
    assert "r2.budget" in b.index()
    b.reveal(["r2.budget"])
    revised = b.record([{"op": "remove", "key": "budget"}, lowered(100, "r2.budget")])
    assert revised.applied, revised.rejections
    b.commit("lowered to 100", "Budget 100")
    budgets = {s.id: s.superseded_by for r in repo.index() for s in r.states}
    assert budgets == {"r1.budget": "r2.budget", "r2.budget": "r3.budget", "r3.budget": None}


def test_superseding_a_state_already_shown_stale_is_refused_at_the_step(
    store: Store, repo: Repository
) -> None:
    _first(store, repo.namespace)
    first = Session.start(repo, "budget 120")
    first.reveal(["r1.budget"])
    first.record([lowered(120, "r1.budget")])
    first.commit("lowered", "Budget 120")
    late = Session.start(repo, "budget 100")
    late.reveal(["r1.budget"])
    refused = late.record([lowered(100, "r1.budget")])
    assert not refused.applied
    assert any("r1.budget is already superseded by r2.budget" in r for r in refused.rejections)


def test_the_guard_judges_on_what_is_committed_at_the_moment_of_the_decision(
    store: Store, repo: Repository
) -> None:
    _first(store, repo.namespace)
    paying = Session.start(repo, "pay the hotel within the budget")
    paying.reveal(["r1.budget"])  # current when opened
    other = Session.start(repo, "lower the budget")
    other.reveal(["r1.budget"])
    other.record([lowered(90, "r1.budget")])
    other.commit("lowered", "Budget 90")  # committed while `paying` runs
    guarded = paying.guard("pay_hotel", {"amount": 140}, cites=["r1.budget"])
    assert not guarded.approved
    assert "r1.budget is superseded by r3.budget" in guarded.reason
    paying.commit("not paid", "Payment refused")
    [bundle] = [b for b in repo.bundles() if b.request.id == "r2"]
    assert [d.approved for d in bundle.decisions] == [False]


def test_the_guard_refuses_a_cited_state_forgotten_meanwhile(
    store: Store, repo: Repository, other_repo: Repository
) -> None:
    _first(store, repo.namespace)
    paying = Session.start(repo, "pay")
    paying.reveal(["r1.budget"])
    Repository(store, repo.namespace).forget_state("r1.budget")  # as another process would
    guarded = paying.guard("pay_hotel", {"amount": 140}, cites=["r1.budget"])
    assert not guarded.approved and "r1.budget was forgotten" in guarded.reason


def test_an_agent_hears_at_its_next_step_what_another_request_made_stale(
    store: Store, namespace: str, shell: Shell
) -> None:
    _first(store, namespace)

    def meanwhile() -> str:
        """Another process lowers the budget while this tool runs."""
        other = Session.start(Repository(store, namespace), "lower it")
        other.reveal(["r1.budget"])
        other.record([lowered(90, "r1.budget")])
        other.commit("lowered", "Budget 90")
        return "ok"

    h = Harness(store, namespace, shell)
    agent, model = h.agent(
        [
            step(access=["r1.budget"], action=tool("meanwhile")),
            step(),
            step(access=["r3.budget"]),  # told at this step, it opens the newer state
            step(action=final("checked", "Budget checked")),
        ],
        tools=[meanwhile],
    )
    result = agent.run("check the budget")
    assert result.request_id == "r2" and result.answer == "checked"
    # Brought up to date while the model thinks, the index tells the prompt after next; the
    # newer state, told by id, opens at once (a later call shows no index: only the notice).
    third = user_prompt(model, 2)
    assert "r1.budget, which this request opened or relates to, was superseded by r3.budget" in (
        third
    )
    assert "- r3.budget [constraint] Hotel budget 90 EUR a night" in user_prompt(model, 3)
    assert result.rejections == 0


def test_an_agent_whose_commit_conflicts_revises_and_commits(
    store: Store, namespace: str, shell: Shell
) -> None:
    _first(store, namespace)

    def meanwhile() -> str:
        """Another process supersedes the same state first."""
        other = Session.start(Repository(store, namespace), "budget 120")
        other.reveal(["r1.budget"])
        other.record([lowered(120, "r1.budget")])
        other.commit("lowered", "Budget 120")
        return "ok"

    h = Harness(store, namespace, shell)
    agent, model = h.agent(
        [
            step(access=["r1.budget"]),
            step([lowered(100, "r1.budget")], action=tool("meanwhile")),
            step(action=final("lowered", "Budget 100")),  # its commit is refused
            step(
                [{"op": "remove", "key": "budget"}, lowered(100, "r3.budget")],
                action=final("lowered after r3", "Budget 100"),
            ),
        ],
        tools=[meanwhile],
    )
    result = agent.run("lower the budget to 100")
    assert result.answer == "lowered after r3" and result.steps == 4
    told = user_prompt(model, 3)
    assert (
        "final answer held back" in told and "r1.budget is already superseded by r3.budget" in told
    )
    budgets = {s.id: s.superseded_by for r in h.fs.repository.index() for s in r.states}
    assert budgets["r1.budget"] == "r3.budget" and budgets["r3.budget"] == "r2.budget"


def test_a_stale_target_is_refused_at_the_step_once_the_model_was_shown_it(
    store: Store, namespace: str, shell: Shell
) -> None:
    _first(store, namespace)

    def meanwhile() -> str:
        """Another process supersedes the state before this request writes its delta."""
        other = Session.start(Repository(store, namespace), "budget 120")
        other.reveal(["r1.budget"])
        other.record([lowered(120, "r1.budget")])
        other.commit("lowered", "Budget 120")
        return "ok"

    h = Harness(store, namespace, shell)
    agent, model = h.agent(
        [
            step(access=["r1.budget"], action=tool("meanwhile")),  # opened after the commit
            step([lowered(100, "r1.budget")], action=final("lowered", "Budget 100")),
            step(access=["r3.budget"]),
            step([lowered(100, "r3.budget")], action=final("lowered after r3", "Budget 100")),
        ],
        tools=[meanwhile],
    )
    result = agent.run("lower the budget to 100")
    assert result.answer == "lowered after r3"
    assert "r1.budget is already superseded by r3.budget" in user_prompt(model, 2)
