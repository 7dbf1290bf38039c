"""`forget --all` fences the namespace: a request begun while it runs is refused at once with
NamespaceBusy, or began before it (and the forget is refused while it runs); no request works
on an id that the reset counter hands out again, and ids still start again at r1 after it.

The forget runs in another process (`flowstate forget --all`) while threads of this one begin,
record and commit requests, so the fence is held by Neo4j, not by anything in a process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from flowstate import FlowState, NamespaceBusy
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from flowstate.store.catalog import Q
from tests.neo4j.conftest import Raw

pytestmark = pytest.mark.neo4j

FILLER = 120_000  # nodes: forgetting them takes several batches, long enough to begin during it
WRITERS = 3


def fill(raw: Raw, namespace: str, nodes: int) -> None:
    """Committed-looking memory, written directly: enough that the forget takes a while."""
    raw.rows(
        "UNWIND range(1, $n) AS i "
        "CREATE (:State {namespace: $ns, id: 'r1.filler_' + i, request_id: 'r1', "
        "key: 'filler_' + i, category: 'environment', summary: 'filler', content: 'filler'})",
        ns=namespace,
        n=nodes,
    )


def fact(key: str) -> dict[str, Any]:
    return {"op": "add", "key": key, "category": "environment", "summary": key, "content": key}


class Writers:
    """Threads that begin, record and commit requests until told to stop, and keep what
    came of each begin."""

    def __init__(self, store: Store, namespace: str) -> None:
        self.store, self.namespace = store, namespace
        # A front door each, its index read once: built before the forget starts, so a writer
        # begins at once when let go, however loaded the machine is.
        self.doors = [FlowState(store, namespace) for _ in range(WRITERS)]
        for door in self.doors:
            door.index()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.refused: list[str] = []  # NamespaceBusy at the begin: nothing was written
        self.committed: list[tuple[str, str, float]] = []  # (id, text, when the begin started)
        self.broken: list[str] = []  # begun, then lost: what the fence must prevent
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(WRITERS)]

    def run(self, writer: int) -> None:
        fs = self.doors[writer]
        n = 0
        while not self.stop.is_set():
            n += 1
            text, began = f"writer {writer} request {n}", time.monotonic()
            try:
                session = fs.begin(text)
            except NamespaceBusy as e:
                with self.lock:
                    self.refused.append(str(e))
                time.sleep(0.02)
                continue
            try:
                session.record([fact(f"w{writer}_{n}")])
                result = session.commit("done", summary=text)
            except Exception as e:  # noqa: BLE001  # every way a begun request is lost counts
                with self.lock:
                    self.broken.append(f"{session.request_id} ({text}): {type(e).__name__}: {e}")
                continue
            with self.lock:
                self.committed.append((result.request_id, text, began))

    def __enter__(self) -> Writers:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)


def forget_all_in_a_process(neo4j_settings: Neo4jSettings, namespace: str) -> subprocess.Popen:
    """`flowstate forget --all` of `namespace`, in a child process."""
    env = {**os.environ, "FLOWSTATE_NEO4J_URI": neo4j_settings.uri}
    flowstate = Path(sys.executable).parent / "flowstate"
    return subprocess.Popen(
        [str(flowstate), "forget", "--all", "-N", namespace, "--yes"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_requests_begun_while_forget_all_runs_are_refused_never_lost(
    store: Store, repo: Repository, raw: Raw, neo4j_settings: Neo4jSettings
) -> None:
    fill(raw, repo.namespace, FILLER)
    FlowState(store, repo.namespace).remember([fact("before")], "before the forget")
    writers = Writers(store, repo.namespace)
    child = forget_all_in_a_process(neo4j_settings, repo.namespace)
    deadline = time.monotonic() + 120
    while raw.count(repo.namespace)[0] > FILLER:  # not deleting yet
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.01)
    with writers:  # they begin while the forget deletes
        _, errors = child.communicate(timeout=240)
        forgotten_at = time.monotonic()
        assert child.returncode == 0, errors
        while len([c for c in writers.committed if c[2] > forgotten_at]) < WRITERS:
            assert time.monotonic() < forgotten_at + 60, "no writer committed after the forget"
            time.sleep(0.05)
    assert writers.broken == []  # every request that began was committed
    assert writers.refused, "no begin met the fence: the forget ended before any writer began"
    assert all("is forgetting the whole namespace" in r for r in writers.refused)
    # Every request begun after the forget is kept, under the id it was given, and ids
    # started again at r1.
    history = {r.id: r.text for r in FlowState(store, repo.namespace).history()}
    after = sorted((c for c in writers.committed if c[2] > forgotten_at), key=lambda c: c[0])
    assert all(history.get(rid) == text for rid, text, _ in after), (history, after)
    assert "r1" in history and all(t.startswith("writer ") for t in history.values())


def test_a_begin_meets_the_fence_at_once_and_writes_nothing(
    store: Store, repo: Repository, raw: Raw
) -> None:
    fs = FlowState(store, repo.namespace)
    fs.remember([fact("kept")], "kept")
    [fence] = repo.run(_fence(repo, "other-host:7:beef", hold_s=30))
    assert fence["fenced"]
    for begin in (lambda: fs.begin("late"), lambda: fs.remember([fact("late")], "late")):
        with pytest.raises(NamespaceBusy, match="writer other-host:7:beef is forgetting") as e:
            begin()
        assert e.value.owner == "other-host:7:beef" and e.value.expires is not None
    assert fs.pending() == [] and [r.id for r in fs.history()] == ["r1"]
    assert raw.counter(repo.namespace)[0]["m"]["last_seq"] == 1  # no id was handed out
    with pytest.raises(NamespaceBusy, match="is forgetting the whole namespace"):
        fs.forget_all()  # a second forget waits for the first one's fence too


def test_a_lapsed_fence_is_lifted_by_a_begin_and_that_forget_stops_short(
    store: Store, repo: Repository, raw: Raw
) -> None:
    """A forget that stalled past its fence (a stopped process) no longer holds the namespace;
    if it wakes up, it deletes nothing more and keeps the counter: no id is handed out twice."""
    fs = FlowState(store, repo.namespace)
    fs.remember([fact("kept")], "kept")
    owner = "stalled-host:9:dead"
    repo.run(_fence(repo, owner, hold_s=1))
    time.sleep(1.2)
    assert fs.remember([fact("later")], "later").request_id == "r2"  # lifts the lapsed fence
    rows = repo.run(_batch(repo, owner))
    assert rows[0]["mine"] is False and rows[0]["deleted"] == 0
    assert [r.id for r in fs.history()] == ["r1", "r2"] and raw.counter(repo.namespace)


def test_an_id_handed_out_before_the_counter_was_reset_never_opens(
    store: Store, repo: Repository
) -> None:
    """A begin whose id came from the counter a `forget --all` then deleted is refused at its
    first save: the new counter hands that id out again."""
    seq = repo.allocate_request_seq()
    repo.forget_namespace()
    with pytest.raises(NamespaceBusy, match=f"cannot open r{seq} .* forgotten after the id"):
        repo.save_draft(f"r{seq}", "{}", owner="late-writer", first=True)
    assert repo.open_requests() == []
    assert FlowState(store, repo.namespace).remember([fact("new")], "new").request_id == "r1"


def _fence(repo: Repository, owner: str, hold_s: int) -> Any:
    return _write(repo, Q.FENCE_NAMESPACE, owner=owner, force=False, hold_s=hold_s)


def _batch(repo: Repository, owner: str) -> Any:
    return _write(repo, Q.FORGET_NAMESPACE_BATCH, owner=owner, batch=10, hold_s=30)


def _write(repo: Repository, name: Q, **params: Any) -> Any:
    rows = yield repo.ops.write(name, **params)
    return rows
