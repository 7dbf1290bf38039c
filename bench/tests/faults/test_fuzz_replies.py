"""Fuzzed model replies (hypothesis): nothing escapes, every refusal is told, commits validate.

The fast cases run the pure step logic (no Neo4j; see `flowstate_bench.fuzz_runs.fast_case`
for every invariant checked). The full cases run the same kind of replies through a real
agent on Neo4j and require the committed graph to be whole and equal to what the rules built.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings

from flowstate.store import Repository, Store
from flowstate_bench import fuzz_world as world
from flowstate_bench.fuzz_replies import HOSTILE, conversations
from flowstate_bench.fuzz_runs import fast_case, full_case

FAST = settings(
    max_examples=400,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FULL = settings(
    max_examples=20,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

_SURROGATE_EVERYWHERE = json.dumps(
    {
        "delta": [{"op": "add", "key": "note", "category": "decision", "summary": "\ud800",
                   "content": "x"}],
        "access": ["\udc00"],
        "action": {"type": "tool", "name": "echo", "arguments": {"text": "\ud800"}},
    }
)  # fmt: skip


@FAST
@given(conversations())
@example([_SURROGATE_EVERYWHERE])
@example(['{"action": {"type": "tool", "name": "echo", "arguments": {"a": NaN, "b": 1e999}}}'])
@example([json.dumps({"access": [h], "delta": [{"op": "remove", "key": h}]}) for h in HOSTILE])
def test_fuzzed_replies_never_escape_the_rules(replies: list[str]) -> None:
    stats = fast_case(replies)
    assert stats.bundle is not None


@pytest.fixture
def sentinel(repo: Repository) -> Repository:
    """A namespace with the same past requests as every fuzzed one: it must never change."""
    for bundle in world.past_bundles(repo.namespace):
        repo.commit(bundle)
    return repo


@pytest.mark.neo4j
@FULL
@given(conversations(max_replies=4))
def test_fuzzed_requests_commit_a_valid_graph(
    store: Store, sentinel: Repository, replies: list[str]
) -> None:
    full_case(store, replies, prefix="fuzz_full")
    assert sentinel.bundles() == world.past_bundles(sentinel.namespace)
