"""Each namespace's counter node keeps how many requests and states it holds, so that the
index's start reads the same at any size: every path that adds or removes keeps the counts
true, a store written before they existed is counted at connect, and the index rendered from
them is the one a full load renders."""

from __future__ import annotations

from typing import Any

import pytest

from flowstate import Fact, FlowState
from flowstate.engine.index import HistoricalIndex
from flowstate.safety.retention import RetentionPolicy
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from tests.neo4j.conftest import Factory, Raw

pytestmark = pytest.mark.neo4j


def held(raw: Raw, namespace: str) -> dict[str, int]:
    """What the namespace holds, counted node by node."""
    [row] = raw.rows(
        "RETURN COUNT { MATCH (r:Request {namespace: $ns}) } AS requests, "
        "COUNT { MATCH (s:State {namespace: $ns}) } AS states",
        ns=namespace,
    )
    return row


def kept(raw: Raw, namespace: str) -> dict[str, Any] | None:
    """The counts on the namespace's counter node (None: no counter node)."""
    [*found] = raw.counter(namespace)
    if not found:
        return None
    return {"requests": found[0]["m"].get("requests"), "states": found[0]["m"].get("states")}


def assert_counted(raw: Raw, namespace: str) -> dict[str, int]:
    truth = held(raw, namespace)
    assert kept(raw, namespace) == truth
    return truth


def fact(key: str, category: str = "environment") -> dict[str, Any]:
    return {"op": "add", "key": key, "category": category, "summary": f"about {key}",
            "content": f"all about {key}"}  # fmt: skip


def test_every_library_path_keeps_the_counts(
    store: Store, repo: Repository, other_repo: Repository, raw: Raw
) -> None:
    fs = FlowState(store, repo.namespace)
    ns = repo.namespace
    fs.remember([fact("hotel"), fact("seat", "preference")], "book a hotel and a seat")
    fs.remember([fact("train"), fact("dinner", "decision")], "then a train and a dinner")
    fs.remember_fact(Fact("Lives in Porto", "environment"))
    assert assert_counted(raw, ns) == {"requests": 3, "states": 5}
    fs.forget("r2.train")  # one state
    assert assert_counted(raw, ns) == {"requests": 3, "states": 4}
    fs.forget("r1")  # a request and its states
    assert assert_counted(raw, ns) == {"requests": 2, "states": 2}
    fs.apply_retention(RetentionPolicy.parse('{"environment": 0}'))  # r3's fact expires
    assert assert_counted(raw, ns) == {"requests": 2, "states": 1}
    copy = FlowState(store, other_repo.namespace)
    copy.import_jsonl(fs.export_jsonl())
    assert assert_counted(raw, other_repo.namespace) == {"requests": 2, "states": 1}
    fs.forget_all()
    assert kept(raw, ns) is None  # the counter went with the rest
    fs.remember_fact(Fact("Starts again", "environment"))
    assert assert_counted(raw, ns) == {"requests": 1, "states": 1}


def test_an_agent_commit_and_a_forget_cut_short_keep_the_counts(
    repo: Repository, make: Factory, raw: Raw
) -> None:
    for seq in range(1, 4):
        repo.commit(make.bundle(seq, states=["a", "b", "c"]))
    assert assert_counted(raw, repo.namespace) == {"requests": 3, "states": 9}
    # A forget --all whose fence lapsed after its first batch keeps the counter: still true.
    from flowstate.store.catalog import Q, query

    raw.rows("MATCH (m:Namespace {namespace: $ns}) SET m.forgetting = 'x'", ns=repo.namespace)
    params = {"namespace": repo.namespace, "owner": "x", "batch": 4, "hold_s": 60}
    raw.rows(query(Q.FORGET_NAMESPACE_BATCH), **params)
    truth = assert_counted(raw, repo.namespace)
    assert truth["requests"] + truth["states"] < 12


def test_the_cli_paths_keep_the_counts(cli, demo_ns: str, raw: Raw, tmp_path) -> None:  # noqa: ANN001
    assert assert_counted(raw, demo_ns)["requests"] == 8  # the demo's agent committed them
    assert cli("forget", "r8", "-N", demo_ns, "--yes").exit_code == 0
    assert cli("forget", "r7.dinner", "-N", demo_ns, "--yes").exit_code == 0
    assert assert_counted(raw, demo_ns)["requests"] == 7
    policy = ["--policy", '{"environment": 0}']
    assert cli("retention", "apply", "-N", demo_ns, *policy, "--yes").exit_code == 0
    truth = assert_counted(raw, demo_ns)
    out, copy = tmp_path / "mem.jsonl", f"{demo_ns}_copy"
    assert cli("export", "-N", demo_ns, "-o", str(out)).exit_code == 0
    assert cli("import", str(out), "-N", copy).exit_code == 0
    assert assert_counted(raw, copy) == truth
    assert cli("forget", "--all", "-N", copy, "--yes").exit_code == 0
    assert kept(raw, copy) is None


def test_a_store_without_counts_is_counted_at_connect(
    repo: Repository, make: Factory, raw: Raw, neo4j_settings: Neo4jSettings
) -> None:
    for seq in range(1, 41):
        repo.commit(make.bundle(seq, states=[f"fact_{k}" for k in range(3)]))
    repo.forget_request("r5")
    full = HistoricalIndex(repo.index(), 150).render().text
    # As a store written before the counts existed has it.
    raw.rows("MATCH (m:Namespace {namespace: $ns}) REMOVE m.requests, m.states", ns=repo.namespace)
    assert kept(raw, repo.namespace) == {"requests": None, "states": None}
    assert HistoricalIndex.load(repo, 150).render().text == full  # counted the slow way
    repo.commit(make.bundle(41, states=["late"]))  # uncounted stays uncounted, not wrong
    assert kept(raw, repo.namespace) == {"requests": None, "states": None}
    with Store.connect(neo4j_settings):
        pass  # the upgrade at connect counts it
    assert assert_counted(raw, repo.namespace) == {"requests": 40, "states": 118}
    assert (
        HistoricalIndex.load(repo, 150).render().text
        == HistoricalIndex(repo.index(), 150).render().text
    )
