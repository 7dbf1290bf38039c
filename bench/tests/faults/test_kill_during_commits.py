"""Neo4j SIGKILLed while requests commit; restarted on the same data folder.

(A Python process killed mid-request is tests/neo4j/test_engine_crash.py: nothing is
half-committed, and the request resumes or is discarded.)
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from flowstate.local.server import LocalServer
from flowstate.store import Repository
from flowstate_bench.fault_kills import KILL_SHAPE, kill_round
from tests.neo4j.conftest import Raw

pytestmark = pytest.mark.neo4j


def _next_chain_and_orphans(spare_raw: Callable[[], Raw]) -> Callable[[Repository], list[str]]:
    """Walk the NEXT chain and look for orphans with our own driver, not the store's."""

    def check(repo: Repository) -> list[str]:
        raw = spare_raw()
        with raw.driver:
            chain = raw.rows(
                "MATCH (r:Request {namespace: $ns}) "
                "OPTIONAL MATCH (r)-[:NEXT]->(n:Request) "
                "RETURN r.seq AS seq, collect(n.seq) AS next ORDER BY seq",
                ns=repo.namespace,
            )
            [orphans] = raw.rows(
                "MATCH (n {namespace: $ns}) WHERE (n:State OR n:Observation) "
                "AND NOT EXISTS { (:Request {namespace: $ns, id: n.request_id})-[:PRODUCED]->(n) }"
                " RETURN count(n) AS n",
                ns=repo.namespace,
            )
        last = len(chain)
        expected = [{"seq": s, "next": [s + 1] if s < last else []} for s in range(1, last + 1)]
        problems = [] if chain == expected else [f"NEXT chain is broken: {chain[:10]}"]
        return problems + ([f"{orphans['n']} orphans"] if orphans["n"] else [])

    return check


def test_every_request_is_whole_or_absent_after_a_kill(
    spare: LocalServer, spare_raw: Callable[[], Raw]
) -> None:
    result = kill_round(
        spare,
        ["kill_a", "kill_b"],
        after_commits=12,
        extra_check=_next_chain_and_orphans(spare_raw),
    )
    print(
        f"\nSIGKILL during commits: {result.acked} commits acknowledged (all present after "
        f"restart), {result.cut} cut in flight ({result.cut_landed} of them had landed whole), "
        f"{result.states_checked} states checked, restart {result.restart_s:.1f}s"
    )
    assert result.problems == []
    assert result.lost == 0 and result.incomplete == 0
    assert result.acked >= 12
    assert result.cut >= 1  # the kill did land in the middle of a commit
    # The database went away (StoreUnavailable), or went away mid-commit (CommitUncertain).
    told = {e.split(" ", 1)[0] for e in result.errors}
    assert told <= {"StoreUnavailable", "CommitUncertain"}, result.errors
    # Every visible request has exactly the bundle's shape (20 states each), no more, no less.
    assert result.states_checked % KILL_SHAPE.states == 0
    assert result.states_checked >= (result.acked) * KILL_SHAPE.states
