"""The session API: another loop's model drives the steps; the rules, drafts and commit are
the agent loop's own (both are shells over one step driver)."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest

from flowstate.engine.agent import Agent
from flowstate.engine.session import Session
from flowstate.errors import StoreUnavailable, UsageError
from flowstate.models import RequestBundle
from flowstate.store import Repository, Store
from tests.neo4j.bolt_proxy import BoltProxy
from tests.neo4j.engine_helpers import Harness, add, final, step
from tests.neo4j.wire import COMMIT, DRAFT_SAVES

pytestmark = pytest.mark.neo4j

BUDGET = add("budget", "constraint", "Hotel budget 150 EUR a night", "At most 150 EUR per night")
HOTEL = add(
    "hotel",
    "decision",
    "Casa Azul chosen",
    "Casa Azul, 120 EUR a night, under the budget",
    relations=[{"type": "DEPENDS_ON", "target": "r1.budget"}],
    evidence=["r2.o1"],
)
SEARCH = ("search_hotels", {"city": "Lisbon"}, '[{"name": "Casa Azul", "price": 120}]')


def facts(bundle: RequestBundle) -> tuple[Any, ...]:
    """A committed request without its timestamps and usage."""
    return (
        (bundle.request.id, bundle.request.summary, bundle.request.answer, bundle.request.outcome),
        sorted((s.id, s.category, s.summary, s.content) for s in bundle.states),
        sorted((r.source, r.type, r.target) for r in bundle.relations),
        sorted((e.state, e.observation) for e in bundle.evidence),
        sorted((o.id, o.tool, o.arguments, o.output, o.is_error) for o in bundle.observations),
        sorted((d.id, d.tool, tuple(d.cites), d.approved, d.reason) for d in bundle.decisions),
    )


def first_request(store: Store, namespace: str) -> None:
    Harness(store, namespace).run([step([BUDGET], action=final("noted", "Budget set"))])


def loop_twin(store: Store, namespace: str) -> Agent:
    """The agent loop taking the host's steps (reveal, search, record, commit) in `namespace`;
    the agent, for its index after the commit."""
    tool, arguments, output = SEARCH

    def search_hotels(city: str) -> str:
        """Hotels in a city."""
        return output

    agent, _ = Harness(store, namespace).agent(
        [
            step(access=["r1.budget"]),
            step(action={"type": "tool", "name": tool, "arguments": arguments}),
            step([HOTEL]),
            step(action=final("Booked Casa Azul", "Hotel booked")),
        ],
        tools=[search_hotels],
    )
    agent.run("Book a hotel in Lisbon")
    return agent


def test_a_host_driven_request_commits_what_the_agent_loop_would(
    store: Store, namespace: str, repo: Repository, other_repo: Repository
) -> None:
    # The same first request in two namespaces; the second request once by a host through
    # the session API, once by the agent loop with the same steps.
    first_request(store, repo.namespace)
    first_request(store, other_repo.namespace)

    session = Session.start(repo, "Book a hotel in Lisbon")
    assert "r1.budget" in session.index()
    opened = session.reveal(["r1.budget"])
    assert [r.state.content for r in opened.states] == ["At most 150 EUR per night"]
    assert session.observe(*SEARCH) == "r2.o1"
    recorded = session.record([HOTEL])
    assert recorded.applied and recorded.states == ["r2.hotel"] and recorded.rejections == []
    result = session.commit("Booked Casa Azul", "Hotel booked")
    assert result.request_id == "r2" and result.states_added == ["r2.hotel"]

    agent = loop_twin(store, other_repo.namespace)

    hosted, looped = repo.bundles()[-1], other_repo.bundles()[-1]
    assert facts(hosted) == facts(looped)
    assert repo.open_requests() == []
    following = Session.start(repo, "next")
    assert following.index() == agent.index.render().text  # the index after the commit
    following.discard()


def test_rule_violations_come_back_as_rejections_the_model_can_act_on(
    store: Store, repo: Repository
) -> None:
    first_request(store, repo.namespace)
    session = Session.start(repo, "Change the budget")
    # A past state is never changed: update applies only to this request's states.
    refused = session.record([{"op": "update", "key": "budget", "summary": "200 EUR"}])
    assert not refused.applied and refused.states == []
    assert any("budget" in r for r in refused.rejections)
    # Only ids that were shown open.
    hidden = session.reveal(["r9.secret"])
    assert hidden.states == [] and hidden.rejections
    # A consequential call must cite what it relies on; refused and recorded.
    guarded = session.guard("book_hotel", {"hotel": "Casa Azul"}, cites=[])
    assert not guarded.approved and "cite the states" in guarded.reason
    session.reveal(["r1.budget"])
    assert session.guard("book_hotel", {"hotel": "Casa Azul"}, cites=["r1.budget"]).approved
    session.commit("Not changed", "Budget kept")
    [*_, bundle] = repo.bundles()
    assert [d.approved for d in bundle.decisions] == [False, True]
    with pytest.raises(UsageError, match="already committed"):
        session.record([add("late")])


def test_a_superseded_state_is_stale_for_the_guard(store: Store, repo: Repository) -> None:
    first_request(store, repo.namespace)
    session = Session.start(repo, "Lower the budget, then pay")
    session.reveal(["r1.budget"])
    lowered = add(
        "budget",
        "constraint",
        "Hotel budget 100 EUR a night",
        "At most 100 EUR",
        relations=[{"type": "SUPERSEDES", "target": "r1.budget"}],
    )
    assert session.record([lowered]).applied
    stale = session.guard("pay", {"amount": 150}, cites=["r1.budget"])
    assert not stale.approved and "SUPERSEDED by r2.budget" in stale.reason
    assert session.guard("pay", {"amount": 100}, cites=["r2.budget"]).approved
    session.discard()
    assert repo.open_requests() == [] and len(repo.history()) == 1


def test_a_discarded_session_refuses_every_further_call(store: Store, repo: Repository) -> None:
    session = Session.start(repo, "changed my mind")
    session.record([BUDGET])
    assert session.discard() == "r1"
    for later in (
        lambda: session.record([add("after")]),
        lambda: session.reveal(["r1.budget"]),
        lambda: session.commit("too late"),
        lambda: session.discard(),
    ):
        with pytest.raises(UsageError, match="r1 was discarded"):
            later()
    assert repo.history() == [] and repo.open_requests() == []
    Session.start(repo, "the next writer").discard()  # the lease is free, not taken again


def test_a_database_failure_applies_nothing_of_the_call(
    wire_store: Store, bolt_proxy: BoltProxy, repo: Repository
) -> None:
    """An error means the call left no trace: the host sends it again, unchanged."""
    session = Session.start(Repository(wire_store, repo.namespace), "record through an outage")
    before = session.active.model_copy(deep=True)
    with pytest.raises(StoreUnavailable) as cut, bolt_proxy.cut(DRAFT_SAVES):
        session.record([BUDGET])
    # What the driver said, after its own retries against a server that refused them.
    assert isinstance(cut.value.__cause__, neo4j.exceptions.ServiceUnavailable)
    assert bolt_proxy.uri in str(cut.value)
    assert session.active == before
    assert session.record([BUDGET]).applied  # the same delta again: not "already exists"
    with pytest.raises(StoreUnavailable), bolt_proxy.cut(DRAFT_SAVES):
        session.observe(*SEARCH)
    assert session.observe(*SEARCH) == "r1.o1"  # the cut call took no id
    session.commit("kept", "after an outage")
    [bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r1.budget"]


def test_a_commit_cut_by_a_stop_is_finished_on_pick_up_and_its_retry_succeeds(
    wire_store: Store, bolt_proxy: BoltProxy, repo: Repository
) -> None:
    session = Session.start(Repository(wire_store, repo.namespace), "commit, then a stop")
    session.record([BUDGET])
    with pytest.raises(StoreUnavailable), bolt_proxy.cut(COMMIT):
        session.commit("noted", "Budget set")
    session.__exit__(None, None, None)  # the process is gone: its lease goes with it
    picked = Session.resume(repo, "r1")
    assert picked.closed and repo.open_requests() == []
    assert picked.commit("noted", "Budget set").request_id == "r1"  # the host's retry
    with pytest.raises(UsageError, match="already committed"):
        picked.record([add("after")])
    assert [r.id for r in repo.history()] == ["r1"]


def test_an_answer_longer_than_a_request_is_refused(store: Store, repo: Repository) -> None:
    session = Session.start(repo, "a huge answer")
    with pytest.raises(UsageError, match="the answer has 100001 characters"):
        session.commit("x" * 100_001)
    assert session.commit("fine").request_id == "r1"


def test_after_a_cut_commit_only_the_commit_goes_on(
    wire_store: Store, bolt_proxy: BoltProxy, repo: Repository
) -> None:
    """The commit failed after the request ended: a later step would commit it silently, so
    every step but the commit is refused, and the commit commits the answer given."""
    session = Session.start(Repository(wire_store, repo.namespace), "commit through an outage")
    session.record([BUDGET])
    with pytest.raises(StoreUnavailable), bolt_proxy.cut(COMMIT):
        session.commit("answer one", "first")
    with pytest.raises(UsageError, match="r1 has ended; its commit was cut"):
        session.record([add("second")])
    assert session.commit("answer two").request_id == "r1"
    assert repo.get_request("r1").answer == "answer one"
    assert [s.id for s in repo.bundles()[0].states] == ["r1.budget"]
