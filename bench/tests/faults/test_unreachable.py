"""Neo4j stopped in the middle of a request: a clear, bounded failure, then a lossless resume."""

from __future__ import annotations

import logging
import re

import pytest

from flowstate.local.server import LocalServer
from flowstate_bench.fault_outage import EXPECTED_STATES, unreachable_during_request

pytestmark = pytest.mark.neo4j

RETRY_TIME_S = 2.0


def test_outage_fails_clearly_and_resume_loses_nothing(
    spare: LocalServer, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="neo4j"):
        out = unreachable_during_request(spare, namespace, retry_time_s=RETRY_TIME_S)
    print(f"\nNeo4j stopped mid-request: gave up after {out.failed_after_s:.2f}s; {out.raised}")
    assert out.problems == []
    # A clear message naming the server, after bounded retries with growing delays.
    assert out.raised.startswith(f"StoreUnavailable: no Neo4j server answered at {out.uri} ")
    assert RETRY_TIME_S <= out.failed_after_s <= 2 * RETRY_TIME_S + 5  # slack for a busy machine
    # The failed save's retries come first and grow; the writer lease's release and renewal
    # retry on their own afterwards (each such sequence starts small again).
    delays = [float(d) for d in re.findall(r"will be retried in ([0-9.]+)s", caplog.text)]
    first = delays[: next((i for i in range(1, len(delays)) if delays[i] < delays[i - 1]), None)]
    assert len(first) >= 2 and first == sorted(first), delays
    # Nothing committed while the database was away; the write-ahead draft is what was left.
    assert out.committed_during == 0 and out.draft_during == "r1"
    # The resume continued: no model call and no tool call repeated, no state lost.
    assert out.resumed_outcome == "answered"
    assert out.committed_states == EXPECTED_STATES
    assert out.cited_observations == ["r1.o2"]  # the observation only memory held
    assert out.model_calls == 3
    assert out.tool_runs == {"lookup": 1, "stop_database": 1}


def test_outage_at_the_final_commit_resumes_without_asking_the_model_again(
    spare: LocalServer, namespace: str
) -> None:
    out = unreachable_during_request(spare, namespace, retry_time_s=RETRY_TIME_S, at="commit")
    print(f"\nNeo4j stopped at commit: {out.model_calls} model calls, answer {out.answer!r}")
    assert out.raised.startswith("StoreUnavailable: ")
    assert out.committed_during == 0 and out.committed_states == EXPECTED_STATES
    assert out.problems == []
    assert out.model_calls == 3 and out.answer == "done"
