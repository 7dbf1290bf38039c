"""What a host that shows its model only `JSON.stringify(structuredContent)` (Claude Code) reads
of the memory tools: each structured result at most 1.1x its text block plus 8 tokens, and at
most 1.1x the text over a scripted 12-call session (`flowstate_bench.mcp_sizes`)."""

from __future__ import annotations

import json

import pytest

from flowstate.settings import Neo4jSettings
from flowstate.tokens import count_tokens
from flowstate_bench.mcp_sizes import RATIO, SLACK, Sized, measure, report, sized, stringify

pytestmark = pytest.mark.neo4j

SESSION = [
    "memory_remember",
    "memory_remember",
    "memory_begin",
    "memory_index",
    "memory_search",
    "memory_reveal",
    "memory_observe",
    "memory_record",
    "memory_commit",
    "memory_why",
    "memory_history",
    "memory_index",
]


def test_each_structured_result_reads_about_as_long_as_its_text(
    neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    calls = measure(neo4j_settings, namespace)
    assert [c.tool for c in calls] == SESSION
    too_long = [
        (c.tool, c.text_tokens, c.structured_tokens)
        for c in calls
        if c.structured_tokens > RATIO * c.text_tokens + SLACK
    ]
    assert too_long == []
    figures = report(calls)
    assert figures["structured_tokens"] <= RATIO * figures["text_tokens"], figures
    assert figures["within"] is True
    # Counted as JSON.stringify writes it: no spaces after separators, non-ASCII as it is.
    for c in calls:
        assert c.structured == json.dumps(json.loads(c.structured), separators=(",", ":"),
                                          ensure_ascii=False)  # fmt: skip
        assert c.structured_tokens == count_tokens(c.structured)


def test_the_bounds_fail_a_result_that_repeats_itself() -> None:
    """The check can fail: a result carrying its text again beside its fields is too long."""
    text = "r1.budget [constraint] Hotel budget 150 EUR a night"
    lean = sized("memory_search", text, {"hits": {"r1.budget": text[10:]}})
    padded = sized("memory_search", text, {"hits": {"r1.budget": text[10:]}, "text": text})
    assert lean.within and not padded.within
    assert stringify({"a": "é", "b": [1]}) == '{"a":"é","b":[1]}'
    assert report([lean, padded])["within"] is False
    assert isinstance(padded, Sized)
