"""A process killed in the middle of a request: nothing half-committed, resume or discard."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flowstate import CommitUncertain, Outcome, RequestInterrupted, UsageError
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from tests.neo4j.conftest import Raw
from tests.neo4j.engine_helpers import Harness, Shell, add, final, step, tool
from tests.neo4j.wire import COMMIT, DRAFT_SAVES, SHORT_HOLD_S, Wire, await_lapse

pytestmark = pytest.mark.neo4j

WORKER = Path(__file__).with_name("crash_worker.py")


def _crash(neo4j_settings: Neo4jSettings, namespace: str, mode: str = "tool") -> None:
    done = subprocess.run(
        [sys.executable, str(WORKER), neo4j_settings.uri, namespace, mode],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 17, done.stderr[-2000:]


def test_nothing_is_committed_and_the_request_resumes(
    shell: Shell,
    neo4j_settings: Neo4jSettings,
    store: Store,
    namespace: str,
    repo: Repository,
    raw: Raw,
) -> None:
    _crash(neo4j_settings, namespace)
    assert repo.history() == []  # no partial request is visible
    assert raw.rows("MATCH (s:State {namespace: $ns}) RETURN s", ns=namespace) == []
    h = Harness(store, namespace, shell)
    agent, model = h.agent([step(action=final("resumed", "Porto plan"))])
    [left] = agent.pending()
    assert left.request_id == "r1" and left.steps == 2
    result = agent.resume()  # the dead process was of this host: taken over at once
    assert result.outcome is Outcome.ANSWERED and result.steps == 3
    [bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r1.city", "r1.hotels"]
    assert [o.id for o in bundle.observations] == ["r1.o1"]  # the cited tool result survived
    resumed_prompt = model.calls[0].messages[-1]["content"]
    assert "Porto has 3 hotels" in resumed_prompt
    assert "die({}) was interrupted when the process stopped; whether it ran is unknown" in (
        resumed_prompt
    )
    assert agent.pending() == []


def test_a_crash_in_the_final_commit_resumes_to_that_commit_without_a_model_call(
    shell: Shell, neo4j_settings: Neo4jSettings, store: Store, namespace: str, repo: Repository
) -> None:
    """Killed as the final commit starts: the draft already says how the request ended, so
    resume() commits the final answer and that step's states; the model is not asked again."""
    _crash(neo4j_settings, namespace, "commit")
    assert repo.history() == []
    h = Harness(store, namespace, shell)
    agent, model = h.agent([])  # any call to the model would fail the test
    assert [r.request_id for r in agent.pending()] == ["r1"]
    result = agent.resume()
    assert model.calls == []
    assert (result.outcome, result.answer, result.steps) == (
        Outcome.ANSWERED,
        "3 hotels in Porto",
        2,
    )
    [bundle] = repo.bundles()
    assert bundle.request.summary == "Porto" and bundle.request.answer == "3 hotels in Porto"
    assert [s.id for s in bundle.states] == ["r1.city", "r1.hotels"]  # the last step's too
    assert [o.id for o in bundle.observations] == ["r1.o1"]
    assert agent.pending() == []


def test_an_interrupted_request_can_be_discarded(
    shell: Shell, neo4j_settings: Neo4jSettings, store: Store, namespace: str, repo: Repository
) -> None:
    _crash(neo4j_settings, namespace)
    h = Harness(store, namespace, shell)
    agent, _ = h.agent([step(action=final("fresh"))])
    assert agent.discard() == "r1"
    assert repo.counts().nodes == 0
    result = agent.run("start over")
    # r1 was handed out to the discarded request: ids are never handed out twice.
    assert result.request_id == "r2" and [r.id for r in repo.history()] == ["r2"]


def test_a_lost_commit_acknowledgement_is_not_committed_twice(
    wire: Wire, namespace: str, repo: Repository
) -> None:
    """The commit lands but the server's reply to COMMIT is lost with the connection: the
    driver cannot tell whether it landed; resume() finds it and returns the answer without
    a second commit and without asking the model again."""
    agent, model = wire.harness(namespace).agent(
        [step([add("fact")], action=final("ok", "one fact"))]
    )
    with pytest.raises(RequestInterrupted) as cut, wire.proxy.lose_commit_reply(COMMIT):
        agent.run("remember one fact")
    assert isinstance(cut.value.__cause__, CommitUncertain)
    assert [r.id for r in repo.history()] == ["r1"]  # it did land
    result = agent.resume()
    assert (result.answer, result.outcome) == ("ok", Outcome.ANSWERED)
    assert len(model.calls) == 1
    assert [r.id for r in repo.history()] == ["r1"]
    assert [s.id for s in repo.bundles()[0].states] == ["r1.fact"]


def test_a_commit_the_driver_ran_again_after_it_landed_answers_once(
    shell: Shell, store: Store, namespace: str, repo: Repository
) -> None:
    """The driver retries a transaction whose acknowledgement was lost (a server restarting
    mid-commit); the first attempt had landed, so the retry meets the request's own id: the
    request is answered, committed once."""
    h = Harness(store, namespace, shell)
    agent, model = h.agent([step([add("fact")], action=final("ok", "one fact"))])
    real_commit = agent.repo.ops.commit

    def landed_then_retried(bundle, **lease):  # noqa: ANN001, ANN003, ANN202
        yield from real_commit(bundle, **lease)
        yield from real_commit(bundle, **lease)

    agent.repo.ops.commit = landed_then_retried  # the plan both shells run
    result = agent.run("remember one fact")
    assert (result.answer, result.outcome) == ("ok", Outcome.ANSWERED)
    assert len(model.calls) == 1
    assert [r.id for r in repo.history()] == ["r1"] and repo.open_requests() == []


def test_a_first_draft_save_the_driver_ran_again_after_it_landed_keeps_the_request(
    shell: Shell, store: Store, namespace: str, repo: Repository
) -> None:
    """The same retry at the request's first save, which opens its draft."""
    h = Harness(store, namespace, shell)
    agent, _ = h.agent([step([add("fact")], action=final("ok", "one fact"))])
    real_save = agent.repo.ops.save_draft

    def landed_then_retried(request_id, payload, **lease):  # noqa: ANN001, ANN003, ANN202
        yield from real_save(request_id, payload, **lease)
        if lease.get("first"):
            yield from real_save(request_id, payload, **lease)

    agent.repo.ops.save_draft = landed_then_retried
    result = agent.run("remember one fact")
    assert (result.answer, result.outcome) == ("ok", Outcome.ANSWERED)
    assert [r.id for r in repo.history()] == ["r1"] and repo.open_requests() == []


def test_a_step_cut_before_its_tool_ran_is_finished_on_resume(
    wire: Wire, namespace: str, repo: Repository
) -> None:
    """The write-ahead save before a tool call fails: the call has not run. resume() runs it
    once and goes on, instead of dropping it."""
    runs: list[str] = []

    def lookup(city: str) -> str:
        """Look a city up."""
        runs.append(city)
        return f"{city}: 3 hotels"

    h = wire.harness(namespace)
    agent, model = h.agent(
        [
            step([add("city")], action=tool("lookup", city="Porto")),
            step([add("hotels", evidence=["r1.o1"])], action=final("3 hotels")),
        ],
        tools=[lookup],
    )
    # 1: the request's start; 2: the write-ahead save before the call
    with pytest.raises(RequestInterrupted), wire.proxy.cut(DRAFT_SAVES, nth=2):
        agent.run("hotels in Porto")
    assert runs == []
    result = agent.resume()
    assert runs == ["Porto"] and len(model.calls) == 2
    assert result.answer == "3 hotels"
    [bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r1.city", "r1.hotels"]
    assert [o.output for o in bundle.observations] == ["Porto: 3 hotels"]


def test_a_failed_write_behind_save_keeps_the_reply_for_resume(
    wire: Wire, namespace: str, repo: Repository
) -> None:
    """Between steps the draft is saved while the model is called (write-behind). When that
    save fails, the error is raised before the reply is acted on; resume() saves the draft
    first, then acts on the kept reply without asking the model again."""
    h = wire.harness(namespace)
    agent, model = h.agent([step([add("a")]), step([add("b")], action=final("done"))])
    # 1: the request's start; 2: step 1's draft, during the second call
    with pytest.raises(RequestInterrupted), wire.proxy.cut(DRAFT_SAVES, nth=2):
        agent.run("two steps")
    assert len(model.calls) == 2 and repo.history() == []
    result = agent.resume()
    assert result.answer == "done" and len(model.calls) == 2
    [bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r1.a", "r1.b"]
    assert agent.pending() == []


def test_a_request_another_writer_discarded_meanwhile_is_not_resumed_from_memory(
    wire: Wire, namespace: str, repo: Repository
) -> None:
    """Cut off from Neo4j, this agent keeps its request in memory; another writer discards
    it meanwhile. resume() must not bring it back."""
    h = wire.harness(namespace)
    steps = [step([add("a")]), step([add("b")], action=final("done"))]
    agent, _ = h.agent(steps, hold_seconds=SHORT_HOLD_S)
    with pytest.raises(RequestInterrupted), wire.proxy.cut(DRAFT_SAVES, nth=2):
        agent.run("two steps")
    # Cut off, the agent could not let its hold go: another writer waits for it to lapse.
    assert [r.held for r in repo.open_requests()] == [True]
    await_lapse(repo)
    other, _ = h.agent([])
    assert other.discard() == "r1"
    with pytest.raises(UsageError, match="r1 was discarded or finished by another writer"):
        agent.resume()
    assert repo.history() == [] and repo.open_requests() == []


def test_a_run_whose_commit_landed_returns_its_result_when_neo4j_goes_after_it(
    wire: Wire, namespace: str, repo: Repository
) -> None:
    """The index refresh that follows a commit fails: the request is committed, so the run
    returns its result (never an error a caller would retry, running the request twice)."""
    from flowstate.store.catalog import Q, query

    stamp = query(Q.NAMESPACE_STAMP)
    agent, _ = wire.harness(namespace).agent(
        [step([add(f"fact{n}")], action=final("ok", f"fact {n}")) for n in range(3)]
    )
    agent.run("the first")
    before = wire.proxy.ran(stamp)
    agent.run("the second")  # as the third will run: its last stamp read follows the commit
    reads = wire.proxy.ran(stamp) - before
    with wire.proxy.cut(stamp, nth=reads):
        result = agent.run("the third")
    assert (result.request_id, result.answer) == ("r3", "ok")
    assert [r.id for r in repo.history()] == ["r1", "r2", "r3"]
