"""Several writers on one namespace: another process's forgets and retention are seen by a
live agent, ids are never reused, requests of several processes run at once, each held by
the writer that runs it."""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flowstate import Outcome, RequestInterrupted
from flowstate.errors import RequestHeld, UsageError
from flowstate.models import Category
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import Harness, Shell, add, final, step, tool, user_prompt

pytestmark = pytest.mark.neo4j

WORKER = Path(__file__).with_name("writer_worker.py")


@pytest.fixture
def h(store: Store, namespace: str, repo: Repository, shell: Shell) -> Harness:
    return Harness(store, namespace, shell)


@pytest.fixture
def elsewhere(neo4j_settings: Neo4jSettings, namespace: str):  # noqa: ANN201
    """The same namespace through a connection of its own, as another process would have."""
    with Store.connect(neo4j_settings) as other:
        yield Repository(other, namespace)


def _remember(h: Harness, key: str, summary: str) -> None:
    h.run([step([add(key, summary=summary)], action=final())])


# --- a live index sees what other processes deleted ---------------------------------------


def test_a_live_agent_stops_showing_a_request_forgotten_elsewhere(h: Harness, elsewhere) -> None:
    _remember(h, "old", "the secret plan")
    agent, model = h.agent([step(action=final()), step(action=final())])
    agent.run("first")  # r2: the index is loaded and cached
    assert "the secret plan" in user_prompt(model, 0)
    elsewhere.forget_request("r1")
    agent.run("second")
    assert "the secret plan" not in user_prompt(model, 1)
    assert "r1" not in agent.index


def test_forgetting_the_newest_request_never_lends_its_id_to_a_live_agent(
    h: Harness, elsewhere
) -> None:
    agent, model = h.agent(
        [step([add("card", summary="card ending 4242")], action=final()), step(action=final())]
    )
    assert agent.run("first").request_id == "r1"
    elsewhere.forget_request("r1")
    second = agent.run("second")
    assert second.request_id == "r2"
    assert "4242" not in user_prompt(model, 1)


def test_a_live_agent_sees_retention_applied_elsewhere(h: Harness, elsewhere) -> None:
    _remember(h, "weather", "rain all week")
    agent, model = h.agent([step(action=final()), step(action=final())])
    agent.run("first")
    elsewhere.expire(Category.ENVIRONMENT, datetime.now(UTC) + timedelta(days=1))
    agent.run("second")
    assert "rain all week" in user_prompt(model, 0)
    assert "rain all week" not in user_prompt(model, 1)


def test_a_live_agent_sees_a_forgotten_state_and_an_unchanged_index_is_not_reloaded(
    h: Harness, elsewhere
) -> None:
    _remember(h, "a", "alpha fact")
    agent, model = h.agent([step(action=final()) for _ in range(3)])
    agent.run("first")
    cached = agent.index
    agent.run("second")  # nothing deleted meanwhile: the same index object, updated in place
    assert agent.index is cached
    elsewhere.forget_state("r1.a")
    agent.run("third")
    assert "alpha fact" in user_prompt(model, 1) and "alpha fact" not in user_prompt(model, 2)


# --- drafts keep nothing that was forgotten ------------------------------------------------


def _draft_of(repo: Repository) -> str:
    [draft] = repo.open_requests()
    return draft.payload


def test_forgetting_a_state_scrubs_it_from_an_interrupted_request(h: Harness, repo) -> None:
    _remember(h, "pin", "the door code")  # content: "content of pin"
    agent, _ = h.agent([step(access=["r1.pin"]), step()])  # then the script runs out
    with pytest.raises(RequestInterrupted):
        agent.run("open the door")
    assert "content of pin" in _draft_of(repo)
    repo.forget_state("r1.pin")
    assert "content of pin" not in _draft_of(repo)
    assert "the door code" not in _draft_of(repo)
    resumed, _ = h.agent([step(action=final("resumed"))])
    assert resumed.resume().outcome is Outcome.ANSWERED  # the scrubbed draft still loads


def test_forgetting_a_request_or_expiring_scrubs_drafts(h: Harness, repo) -> None:
    _remember(h, "pin", "the door code")
    _remember(h, "wifi", "the wifi password")
    agent, _ = h.agent([step(access=["r1.pin", "r2.wifi"]), step()])
    with pytest.raises(RequestInterrupted):
        agent.run("go")
    repo.forget_request("r1")
    assert "content of pin" not in _draft_of(repo)
    assert "content of wifi" in _draft_of(repo)
    repo.expire(Category.ENVIRONMENT, datetime.now(UTC) + timedelta(days=1))
    assert "content of wifi" not in _draft_of(repo)


def test_a_state_forgotten_while_the_request_runs_is_not_saved_back(
    h: Harness, repo, elsewhere
) -> None:
    _remember(h, "pin", "the door code")

    def forget_it() -> str:
        """Another process forgets the state while this tool runs."""
        elsewhere.forget_state("r1.pin")
        return "forgotten"

    agent, _ = h.agent([step(access=["r1.pin"]), step(action=tool("forget_it"))], tools=[forget_it])
    with pytest.raises(RequestInterrupted):
        agent.run("go")
    assert "content of pin" not in _draft_of(repo)


# --- many writers at once, across processes ------------------------------------------------


def _start_writer(neo4j_settings: Neo4jSettings, namespace: str, go: Path) -> subprocess.Popen:
    child = subprocess.Popen(
        [sys.executable, str(WORKER), neo4j_settings.uri, namespace, str(go)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    line = child.stdout.readline() if child.stdout else ""
    assert line.startswith("started "), (line, child.stderr.read() if child.stderr else "")
    return child


def test_a_second_process_runs_its_own_request_while_the_first_runs(
    neo4j_settings: Neo4jSettings, h: Harness, repo: Repository, tmp_path: Path
) -> None:
    go = tmp_path / "go"
    child = _start_writer(neo4j_settings, h.namespace, go)
    try:
        [running] = repo.open_requests()
        assert running.request_id == "r1" and running.held
        agent, model = h.agent([step([add("mine")], action=final("parent done"))])
        result = agent.run("me too")  # no waiting: requests of one namespace run side by side
        assert (result.request_id, result.answer) == ("r2", "parent done")
        with pytest.raises(RequestHeld, match=f"writer {running.holder} holds it"):
            agent.discard("r1")  # never from under a running request
        with pytest.raises(RequestHeld):
            agent.resume("r1")
        with pytest.raises(UsageError, match="no interrupted request"):
            agent.resume()  # the only open request is held: nothing to resume
        time.sleep(7)  # longer than the child's 6 s hold: its renewal must keep it
        request = repo.open_request("r1")
        assert request is not None and request.held
    finally:
        go.touch()
        out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err[-2000:]
    assert "committed r1" in out
    assert sorted(r.id for r in repo.history()) == ["r1", "r2"]
    assert repo.open_requests() == []


def test_a_killed_writer_on_this_host_can_be_taken_over_at_once(
    neo4j_settings: Neo4jSettings, h: Harness, repo: Repository, tmp_path: Path
) -> None:
    child = _start_writer(neo4j_settings, h.namespace, tmp_path / "never")
    child.kill()
    child.communicate(timeout=60)
    [left] = repo.open_requests()
    assert left.held  # still held by the dead process, until its hold lapses
    agent, _ = h.agent([step(action=final("took over"))])
    assert agent.run("fresh").request_id == "r2"  # never blocked by it
    assert agent.discard() == "r1"  # taken over at once: its holder is known to be dead
    assert repo.open_requests() == []


def test_a_request_asking_again_for_what_it_opened_reads_it_again(
    store: Store, repo: Repository, neo4j_settings: Neo4jSettings
) -> None:
    from flowstate import FlowState

    fs = FlowState(store, repo.namespace)
    fs.remember([add("card", "environment", "Card on file", "SECRET card 4111")], "my card")
    fs.remember([add("budget", "constraint", "Budget 150", "150 EUR")], "my budget")
    session = fs.begin("pay the hotel")
    first = session.reveal(["r1.card", "r2.budget"])
    assert sorted(r.state.id for r in first.states) == ["r1.card", "r2.budget"]
    with Store.connect(neo4j_settings, ensure_schema=False) as elsewhere:  # another process
        other = FlowState(elsewhere, repo.namespace)
        other.forget("r1")
        lowered = add("budget", "constraint", "Budget 90", "90 EUR",
                      relations=[{"type": "SUPERSEDES", "target": "r2.budget"}])  # fmt: skip
        newer = other.remember([lowered], "lower the budget").request_id
    again = session.reveal(["r1.card", "r2.budget"])
    assert [(r.state.id, r.superseded_by) for r in again.states] == [
        ("r2.budget", [f"{newer}.budget"])
    ]
    assert any("r1.card" in m and "forgotten since it was shown" in m for m in again.rejections)
    assert "r1.card" not in session.active.revealed  # no copy kept to be shown or saved
    session.discard()
