"""The MCP server's pure parts: the search query built from words only, argument checks with
short errors, pages of items, keys made from a fact's summary."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flowstate.compact import schemas
from flowstate.compact.arguments import Refused, validated
from flowstate.compact.paging import pack
from flowstate.engine.fact import key_from
from flowstate.engine.relevance import words
from flowstate.errors import ValidationFailed
from flowstate.models.ids import KEY_PATTERN
from flowstate.store.search import lucene_query


def test_the_lucene_query_is_words_and_the_namespace_term() -> None:
    assert lucene_query("t-1.x", ["hotel", "lisbon"]) == (
        "+namespace_term:nsoqwtclty +(summary:(hotel lisbon) content:(hotel lisbon))"
    )
    for bad in (["a:b"], ["*"], ['"'], ["AND"], [], ["x y"]):
        with pytest.raises(ValidationFailed):
            lucene_query("ns", bad)


@given(st.text(max_size=300))
def test_no_text_reaches_lucene_as_syntax(text: str) -> None:
    found = words(text)
    if not found:
        return
    query = lucene_query("ns", found)
    terms = query.split("summary:(", 1)[1].split(")", 1)[0].split()
    assert all(t.isalnum() and t == t.lower() for t in terms)
    for special in '+-!(){}[]^"~*?:\\/&|':
        assert special not in "".join(terms)


def test_argument_errors_are_short_and_never_quote_the_value() -> None:
    with pytest.raises(Refused, match="delta: List should have at most 100 items"):
        validated(schemas.RecordArgs, {"request_id": "r1", "handle": "h", "delta": [{}] * 500})
    ops = [{"op": "add", "key": "k", "category": "secret-value"}] * 100
    with pytest.raises(Refused) as refused:
        validated(schemas.RecordArgs, {"request_id": "r1", "handle": "h", "delta": ops})
    message = str(refused.value)
    assert len(message) < 1_500 and "and 292 more problems" in message
    assert "secret-value" not in message and "https://" not in message
    with pytest.raises(Refused, match="namespace: Extra inputs are not permitted"):
        validated(schemas.IndexArgs, {"namespace": "other"})


def test_lists_sent_as_json_text_are_read_as_lists() -> None:
    args = validated(schemas.RevealArgs, {"ids": '["r1.a", "r2.b"]'})
    assert args.ids == ["r1.a", "r2.b"]
    query = validated(schemas.SearchArgs, {"query": '["not", "a", "list"]'})
    assert query.query == '["not", "a", "list"]'  # a string field stays the string sent


def test_pages_keep_items_whole_and_cut_only_what_is_larger_than_a_page() -> None:
    items = [{"id": f"r1.k{i}", "content": "x" * 300} for i in range(10)]
    items.append({"id": "r1.big", "content": 'é"\n' * 2_000})
    pages = pack(items, 1_000, "content")
    assert all(len(json.dumps(p, indent=1, ensure_ascii=False)) <= 1_000 for p in pages)
    whole = [x for p in pages for x in p if "part" not in x]
    assert [x["id"] for x in whole] == [f"r1.k{i}" for i in range(10)]
    parts = [x for p in pages for x in p if "part" in x]
    assert "".join(x["content"] for x in parts) == 'é"\n' * 2_000
    assert [x["part"] for x in parts] == list(range(1, len(parts) + 1))


@pytest.mark.parametrize(
    ("summary", "key"),
    [
        ("Prefers an aisle seat", "prefers_aisle_seat"),
        ("42 is the answer", "fact_42_answer"),
        ("東京に住んでいる", "fact"),
        ("Lives at Rua Augusta 12, Lisbon (top floor)", "lives_rua_augusta_12_lisbon"),
    ],
)
def test_keys_from_summaries_are_valid_state_keys(summary: str, key: str) -> None:
    import re

    assert key_from(summary) == key and re.fullmatch(KEY_PATTERN, key)
