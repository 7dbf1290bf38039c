"""An outside attack on `FlowStateStore`: values of ordinary size, batches of many puts, a
namespace-scoped search in a busy store, and two writers putting one new key at once."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langgraph.store.base import PutOp

from flowstate import AsyncFlowState, FlowState, UsageError
from flowstate.integrations.langgraph_store import FlowStateStore
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store

pytestmark = pytest.mark.neo4j


@pytest.fixture
def other(neo4j_settings: Neo4jSettings, namespace: str) -> Iterator[FlowState]:
    """A second front door on the same namespace: another process's writer."""
    with FlowState.connect(settings=neo4j_settings, namespace=namespace) as front:
        yield front


def test_a_value_longer_than_a_summary_line_is_kept(fs: FlowState) -> None:
    store = FlowStateStore(fs)
    note = {"note": "x" * 400}
    store.put(("users", "ana"), "note", note)
    item = store.get(("users", "ana"), "note")
    assert item is not None and item.value == note
    line = next(s.summary for s in fs.current_states("kv_"))
    assert line.startswith("users/ana/note: ") and line.endswith("…")


def test_a_value_up_to_a_states_content_limit_is_kept(fs: FlowState) -> None:
    store = FlowStateStore(fs)
    value = {"text": "y" * 19_000}
    store.put(("docs",), "long", value)
    item = store.get(("docs",), "long")
    assert item is not None and item.value == value


def test_a_batch_of_many_puts_is_kept_whole(fs: FlowState) -> None:
    store = FlowStateStore(fs)
    store.batch([PutOp(("many",), f"k{i}", {"i": i}) for i in range(75)])
    found = store.search(("many",), limit=100)
    assert sorted(item.value["i"] for item in found) == list(range(75))


@pytest.mark.xfail(
    strict=True,
    reason="a query search reads the namespace's 50 best full-text hits, then keeps the "
    "tuple's: items of another tuple that match better crowd this tuple's match out",
)
def test_a_query_finds_the_tuples_item_whatever_other_tuples_hold(fs: FlowState) -> None:
    store = FlowStateStore(fs)
    store.batch([PutOp(("crowd",), f"k{i}", {"note": "window window window"}) for i in range(60)])
    store.put(("users", "ana"), "seat", {"seat": "window, and an aisle would do as well"})
    assert [i.key for i in store.search(("users",), query="window")] == ["seat"]


def test_two_writers_putting_a_new_key_leave_one_current_value(
    fs: FlowState, other: FlowState, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = FlowStateStore(fs), FlowStateStore(other)
    read = fs.current_states
    raced: list[bool] = []

    def read_then_race(prefix: str) -> object:
        states = read(prefix)
        if not raced:  # the other writer's put lands between this batch's read and its commit
            raced.append(True)
            second.put(("r",), "k", {"who": "second"})
        return states

    monkeypatch.setattr(fs, "current_states", read_then_race)
    first.put(("r",), "k", {"who": "first"})
    monkeypatch.undo()
    assert len(fs.current_states("kv_")) == 1
    first.delete(("r",), "k")
    assert first.get(("r",), "k") is None


def test_three_writers_putting_one_key_lose_no_put(
    neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    """Three writers, each with its own connection, putting one key 20 times: every put
    succeeds (LangGraph's stores never refuse a put for a concurrent one)."""
    with ThreadPoolExecutor(3) as pool:
        failed = list(pool.map(lambda who: _put_many(neo4j_settings, namespace, who), "abc"))
    with Store.connect(neo4j_settings) as store:
        Repository(store, namespace).forget_namespace(force=True)
    assert failed == [[], [], []]


def _put_many(settings: Neo4jSettings, namespace: str, who: str) -> list[str]:
    failed = []
    with FlowState.connect(settings=settings, namespace=namespace) as fs:
        store = FlowStateStore(fs)
        for i in range(20):
            try:
                store.put(("r",), "k", {"who": who, "i": i})
            except Exception as e:  # what a LangGraph caller would see
                failed.append(f"{type(e).__name__}: {e}"[:200])
    return failed


@pytest.mark.xfail(
    strict=True,
    reason="a store over an AsyncFlowState awaited on another event loop than the one it was "
    "opened on fails deep in the driver (RuntimeError: a Future attached to a different loop), "
    "not with a UsageError that says which loop to use",
)
def test_a_store_awaited_on_another_loop_is_refused_clearly(
    neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    home = asyncio.new_event_loop()
    thread = threading.Thread(target=home.run_forever, daemon=True)
    thread.start()

    def on_home(work: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(work, home).result(30)

    afs = on_home(AsyncFlowState.connect(settings=neo4j_settings, namespace=namespace))
    try:
        store = FlowStateStore(afs)
        with pytest.raises(UsageError, match="loop"):
            asyncio.run(store.aput(("u",), "k", {"v": 1}))
    finally:
        on_home(afs.close())
        home.call_soon_threadsafe(home.stop)
        thread.join(10)
        with Store.connect(neo4j_settings) as store_:
            Repository(store_, namespace).forget_namespace(force=True)
