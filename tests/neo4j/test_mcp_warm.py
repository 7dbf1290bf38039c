"""A server's first calls cost what its later ones do: it rehearses every tool once connected,
inside one transaction rolled back (nothing of it is kept); and a reveal of what the caller
was just shown reads only that."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from flowstate import FlowState
from flowstate.engine.fact import Fact
from flowstate.mcp.memory import Memory
from flowstate.mcp.server import build_server
from flowstate.mcp.settings import McpSettings
from flowstate.mcp.warmup import warm_up
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from flowstate.store.plans import Op
from tests.neo4j.conftest import Raw
from tests.neo4j.mcp_host import memory_over

pytestmark = pytest.mark.neo4j


class Counting(Store):
    """The same server, counting the operations it runs."""

    def __init__(self, store: Store) -> None:
        super().__init__(store._driver, store.settings)
        self.ops: list[Op] = []

    def _perform(self, op: Op) -> Any:
        self.ops.append(op)
        return super()._perform(op)

    def close(self) -> None:
        pass  # the driver is the fixture's


def _nodes(raw: Raw, prefix: str) -> int:
    """Namespace counters, requests and states of the namespaces whose name starts so."""
    total = 0
    for label in ("Namespace", "Request", "State"):
        query = f"MATCH (n:{label}) WHERE n.namespace STARTS WITH $p RETURN count(n) AS n"
        total += int(raw.rows(query, p=prefix)[0]["n"])
    return total


def test_a_rehearsal_runs_for_real_and_keeps_nothing(store: Store, repo: Repository, raw: Raw):
    fs = FlowState(store, repo.namespace)
    with fs.rehearsal() as dry:
        assert dry.namespace.startswith("rehearsal-")
        result = dry.remember_fact(Fact("Prefers the window seat", "preference"))
        assert result.states_added == ["r1.prefers_window_seat"]
        # Inside the rehearsal the write is there: what follows reads it.
        assert [s.state.id for s in dry.reveal(["r1.prefers_window_seat"])] == result.states_added
        session = dry.begin("Book a seat")
        session.commit("booked")
        assert [r.id for r in dry.history()] == ["r1", "r2"]
    assert _nodes(raw, dry.namespace) == 0
    assert _nodes(raw, repo.namespace) == 0  # the front door it came from wrote nothing
    kept = fs.remember_fact(Fact("Prefers aisle", "preference"))
    assert kept.request_id == "r1"


def test_the_warm_up_calls_every_listed_tool_and_keeps_nothing(
    store: Store, repo: Repository, raw: Raw
) -> None:
    memory = memory_over(store, repo.namespace)
    try:
        # Every tool once, some twice (a fact superseding the first, reads in a request);
        # a read-only server's reads find nothing to reveal in an empty namespace.
        for settings, calls in (
            (McpSettings(namespace=repo.namespace, allow_forget=True), 17),
            (McpSettings(namespace=repo.namespace), 16),
            (McpSettings(namespace=repo.namespace, read_only=True), 3),
        ):
            _, tools = build_server(memory, settings)
            assert warm_up(memory.get(), tools) == calls, settings
    finally:
        memory.close()
    assert _nodes(raw, "rehearsal-") == 0
    assert _nodes(raw, repo.namespace) == 0


def test_a_served_memory_lets_calls_through_then_warms_up(store: Store, repo: Repository):
    said: list[str] = []
    memory = Memory(lambda say: FlowState(store, repo.namespace), said.append)
    _, tools = build_server(memory, McpSettings(namespace=repo.namespace))
    memory.warm = lambda fs: warm_up(fs, tools)
    memory.start()
    try:
        memory.get(60)
        # A host's call meanwhile takes its turn between the rehearsed ones.
        _, out = tools.call(
            "memory_remember", {"summary": "Lives in Porto", "category": "environment"}
        )
        assert out is not None and out["state_id"] == "r1.lives_porto"
        deadline = time.monotonic() + 60
        while not any(s.startswith("warmed up") for s in said) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        memory.close()
    [connected] = [i for i, s in enumerate(said) if s.startswith("connected")]
    [warmed] = [i for i, s in enumerate(said) if s.startswith("warmed up: 16 calls rehearsed")]
    assert connected < warmed, said
    assert [s.state.id for s in FlowState(store, repo.namespace).reveal(["r1.lives_porto"])]


def test_a_reveal_of_what_the_caller_was_just_shown_reads_only_that(
    store: Store, repo: Repository
) -> None:
    counting = Counting(store)
    fs = FlowState(counting, repo.namespace)
    fs.shown_index()
    browse = fs.browse()
    result = fs.remember_fact(Fact("Prefers the window seat", "preference"))
    browse.shown(result.states_added)
    counting.ops.clear()
    [opened] = browse.open(result.states_added).states
    assert opened.state.summary == "Prefers the window seat"
    assert len(counting.ops) == 1, counting.ops  # the reveal; the index is not read
    # Forgotten by another process meanwhile: the reveal says so, and nothing opens.
    FlowState(store, repo.namespace).forget(result.states_added[0])
    gone = browse.open(result.states_added)
    assert gone.states == [] and "forgotten" in " ".join(gone.rejections)


def test_closing_waits_for_the_warm_up_to_stop_before_the_driver_closes(
    neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    said: list[str] = []
    busy = threading.Event()
    memory = Memory(
        lambda say: FlowState.connect(settings=neo4j_settings, namespace=namespace), said.append
    )

    def warm(fs: FlowState) -> int:  # reads until the server closes, as a long warm-up would
        busy.set()
        calls = 0
        while not memory.closing.is_set():
            fs.index()
            calls += 1
        return calls

    memory.warm = warm
    memory.start()
    assert busy.wait(60), said
    memory.close()
    assert [s for s in said if s.startswith("warmed up")], said  # it ended, not cut short
    assert not [s for s in said if "skipped" in s or "closing the memory" in s], said
