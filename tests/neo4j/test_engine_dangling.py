"""Another process forgets (or expires) a past state while a request that relates to it or
cites it runs: the request still commits what is valid and says what it dropped and why;
resume() never loops. Also: one forgotten id does not block an access batch."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from flowstate import AgentConfig, CommitUncertain, Outcome, RequestInterrupted, Tool
from flowstate.models import Category
from flowstate.models.records import utcnow
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import Harness, Shell, add, final, step, tool, user_prompt
from tests.neo4j.wire import COMMIT, SHORT_HOLD_S, Wire, await_lapse

pytestmark = pytest.mark.neo4j


@pytest.fixture
def h(store: Store, namespace: str, repo: Repository, shell: Shell) -> Harness:
    return Harness(store, namespace, shell)


@pytest.fixture
def other(neo4j_settings: Neo4jSettings, namespace: str) -> Iterator[Repository]:
    """The same namespace through a second connection: another process."""
    with Store.connect(neo4j_settings) as second:
        yield Repository(second, namespace)


def _seed(h: Harness) -> None:
    h.run([step([add("budget", "constraint"), add("city", "constraint")], action=final())])


def _booking_request(h: Harness, between, **agent: object):  # noqa: ANN001, ANN202
    """r2 reveals r1.budget and r1.city, relates a plan to both, books citing both; the model's
    third call runs `between` (another process acting) before answering."""
    booked: list[str] = []

    def book(hotel: str) -> str:
        """Book a hotel."""
        booked.append(hotel)
        return f"booked {hotel}"

    script = [
        step(access=["r1.budget", "r1.city"]),
        step(
            [
                add(
                    "plan",
                    "decision",
                    relations=[
                        {"type": "DEPENDS_ON", "target": "r1.budget"},
                        {"type": "DERIVED_FROM", "target": "r1.city"},
                    ],
                )
            ],
            action={**tool("book", hotel="Casa Azul"), "cites": ["r1.budget", "r1.city"]},
        ),
    ]

    def policy(messages):  # noqa: ANN001, ANN202
        n = len(model.calls)
        if n < len(script):
            return script[n]
        if n == len(script):
            between()
            return step([add("note")], action=final("booked", "hotel booked"))
        raise AssertionError("the model was asked again")

    agent_, model = h.agent(policy, tools=[Tool.from_function(book, consequential=True)])
    agent_.approve = lambda _asked: True
    for name, value in agent.items():
        setattr(agent_, name, value)
    return agent_, model, booked


def test_a_state_forgotten_mid_request_is_dropped_at_commit_and_said(
    h: Harness, repo: Repository, other: Repository
) -> None:
    _seed(h)
    agent, model, booked = _booking_request(h, lambda: other.forget_state("r1.budget"))
    result = agent.run("book a hotel within budget")
    assert (result.outcome, result.answer, booked) == (Outcome.ANSWERED, "booked", ["Casa Azul"])
    assert len(model.calls) == 3
    assert result.dropped == [
        "relation r2.plan DEPENDS_ON r1.budget: r1.budget was forgotten before the commit",
        "r2.a1 (book) cited r1.budget, forgotten before the commit; the decision is kept "
        "without that citation",
    ]
    assert repo.get_request("r2").dropped == result.dropped  # the request node says so
    [_, bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r2.plan", "r2.note"]
    assert [(r.type.value, r.target) for r in bundle.relations] == [("DERIVED_FROM", "r1.city")]
    [decision] = repo.decisions("r2")
    assert decision.approved and decision.cites == ["r1.city"]
    assert repo.open_requests() == [] and agent.pending() == []


def test_a_state_expired_by_retention_mid_request_is_dropped_too(
    h: Harness, repo: Repository, other: Repository
) -> None:
    _seed(h)

    def expire() -> None:
        other.expire(Category.CONSTRAINT, utcnow() + timedelta(seconds=1))  # both r1 states

    agent, model, _ = _booking_request(h, expire)
    result = agent.run("book")
    assert result.outcome is Outcome.ANSWERED and len(model.calls) == 3
    assert len(result.dropped) == 3  # two relations and one decision
    assert all("forgotten before the commit" in d for d in result.dropped)
    assert repo.bundles()[-1].relations == []
    assert repo.decisions("r2")[0].cites == []


def test_a_forgotten_request_mid_request_does_not_block_its_successor(
    h: Harness, repo: Repository, other: Repository
) -> None:
    _seed(h)
    agent, _, _ = _booking_request(h, lambda: other.forget_request("r1"))
    result = agent.run("book")
    assert result.outcome is Outcome.ANSWERED and len(result.dropped) == 3
    assert [r.id for r in repo.history()] == ["r2"]


def test_a_commit_cut_then_a_forget_resumes_without_a_loop_or_a_model_call(
    h: Harness, repo: Repository, other: Repository, wire: Wire
) -> None:
    """The commit fails (Neo4j went away), the state is forgotten meanwhile, then resume():
    it commits what is valid at once; before, every resume() failed with NotFound."""
    _seed(h)
    agent, model, _ = _booking_request(wire.harness(repo.namespace), lambda: None)
    with pytest.raises(RequestInterrupted), wire.proxy.cut(COMMIT):
        agent.run("book")
    other.forget_state("r1.city")
    calls = len(model.calls)
    result = agent.resume()
    assert len(model.calls) == calls == 3
    assert result.outcome is Outcome.ANSWERED
    assert result.dropped[0] == (
        "relation r2.plan DERIVED_FROM r1.city: r1.city was forgotten before the commit"
    )
    assert repo.get_request("r2").dropped == result.dropped
    assert wire.proxy.ran(COMMIT) == 3  # cut, refused with NotFound, committed without r1.city


def test_a_draft_reloaded_after_a_forget_commits_without_a_model_call(
    h: Harness, store: Store, repo: Repository, other: Repository, wire: Wire
) -> None:
    """Same, but a new process resumes from the draft (which holds how the request ended)."""
    _seed(h)
    hold = AgentConfig(hold_seconds=SHORT_HOLD_S)
    agent, model, _ = _booking_request(wire.harness(repo.namespace), lambda: None, config=hold)
    with pytest.raises(RequestInterrupted), wire.proxy.cut(COMMIT):
        agent.run("book")
    await_lapse(repo)  # the process that held it is cut off, as if dead
    other.forget_state("r1.budget")
    fresh, fresh_model = Harness(store, repo.namespace, h.shell).agent([])  # would fail if asked
    result = fresh.resume()
    assert fresh_model.calls == [] and result.answer == "booked"
    assert len(result.dropped) == 2
    assert [s.id for s in repo.bundles()[-1].states] == ["r2.plan", "r2.note"]


def test_one_forgotten_id_does_not_block_an_access_batch(
    h: Harness, repo: Repository, other: Repository
) -> None:
    h.run([step([add("a"), add("b"), add("c")], action=final())])
    h.run([step([add("d")], action=final())])

    def policy(messages):  # noqa: ANN001, ANN202
        if len(model.calls) == 0:
            other.forget_state("r1.b")  # after the index was rendered, before the reveal
            other.forget_request("r2")
            return step(access=["r1.a", "r1.b", "r1.c", "r2.d"])
        return step(action=final())

    agent, model = h.agent(policy)
    result = agent.run("open three")
    assert result.revealed == ["r1.a", "r1.c"]
    prompt = user_prompt(model, 1)
    assert f"access r1.b: not found in namespace {repo.namespace!r} (forgotten since it was " in (
        prompt
    )
    assert "access r2.d: not found" in prompt
    assert "content of a" in prompt and "content of c" in prompt


def test_a_lost_acknowledgement_of_a_commit_that_dropped_still_reports_the_drops(
    h: Harness, repo: Repository, other: Repository, wire: Wire
) -> None:
    _seed(h)
    forget = lambda: other.forget_state("r1.budget")  # noqa: E731
    agent, model, _ = _booking_request(wire.harness(repo.namespace), forget)
    # The first commit is refused (NotFound, rolled back); the retry without r1.budget
    # lands, and the server's reply to its COMMIT is lost.
    with pytest.raises(RequestInterrupted) as cut, wire.proxy.lose_commit_reply(COMMIT, nth=2):
        agent.run("book")
    assert isinstance(cut.value.__cause__, CommitUncertain)
    result = agent.resume()
    assert len(model.calls) == 3 and [r.id for r in repo.history()] == ["r1", "r2"]
    assert len(result.dropped) == 2 and result.dropped == repo.get_request("r2").dropped
