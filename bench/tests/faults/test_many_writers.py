"""Many writers through every shell on one namespace of the shared server, one of their
processes SIGKILLed mid-request (the server itself is never touched): nothing answered is
lost or duplicated, every missing id is explained, the guard's decisions agree with the
commits around them and the followed index equals a rebuild."""

from __future__ import annotations

import pytest

from flowstate.settings import Neo4jSettings
from flowstate_bench.fault_many_writers import many_writers
from flowstate_bench.fault_writer_jobs import Belief, newer_than

pytestmark = pytest.mark.neo4j

WRITERS, REQUESTS = 4, 4  # one writer per shell; writers 2 and 3 in processes of their own


def test_a_killed_writer_process_is_taken_over_and_nothing_is_lost(
    neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    found = many_writers(neo4j_settings, WRITERS, REQUESTS, kills=1, namespace=namespace)
    assert found["problems"] == []
    assert found["shells"] == {"sync": 1, "async": 1, "session": 1, "mcp": 1}
    assert found["writer_processes"] == 2 and found["writer_kills"] == 1
    assert found["neo4j_restarts"] == 0
    # The killed request was discarded, or had committed (then its writer never heard).
    killed = found["gaps_discarded"] + found["gaps_killed_before_first_draft"]
    assert found["committed"] + killed == WRITERS * REQUESTS
    assert found["answered"] + found["committed_unanswered"] == found["committed"]
    assert (found["lost"], found["duplicated"], found["without_mark"]) == (0, 0, 0)
    assert found["unexplained_gaps"] == []
    assert found["highest_id"] == found["committed"] + 1 + len(found["gaps"])  # r1: the seed
    assert (found["failed"], found["namespace_busy"], found["request_held"]) == (0, 0, 0)
    assert found["guard_approved"] + found["guard_denied_stale"] >= 1
    assert (found["guard_inconsistent"], found["guard_unlogged"]) == (0, 0)
    assert found["index_matches_rebuild"] and found["writer_indexes_matching"] == WRITERS
    assert found["writer_indexes_differing"] == 0
    assert found["open_left"] == 0


def test_a_writer_believes_the_newest_budget_it_did_not_see_superseded() -> None:
    belief = Belief()
    assert belief.learn("r1: Budget set\n  r1.budget [constraint] Hotel budget 150") == "r1.budget"
    shown = (
        "  r1.budget [constraint] Hotel budget 150  (SUPERSEDED by r6.budget)\n"
        "  r6.budget [constraint] Hotel budget lowered\n"
        "  r9.budget [constraint] the request's own, not a past state"
    )
    assert belief.learn(shown, own_request="r9") == "r6.budget"
    refused = "cannot commit r9: r6.budget is already superseded by r4.budget (committed by..."
    assert newer_than(refused) == "r4.budget"
    assert belief.learn(refused, own_request="r9") == "r4.budget"  # a lower id committed later
