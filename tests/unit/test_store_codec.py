"""Model <-> property conversion and the id checks made before any query."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import neo4j.time
import pytest

from flowstate.errors import StoreError, ValidationFailed
from flowstate.models import ActionDecision, Category, Outcome, Request, StateNode, Usage
from flowstate.store import codec

T = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)


def _request(**kw) -> Request:
    base = dict(
        namespace="ns",
        id="r2",
        seq=2,
        text="t",
        summary="s",
        outcome=Outcome.ANSWERED,
        started_at=T,
        finished_at=T,
        usage=Usage(prompt_tokens=5, completion_tokens=7, calls=2),
    )
    return Request(**{**base, **kw})


def test_request_usage_is_flattened_and_folded_back():
    props = codec.to_props(_request())
    assert "usage" not in props and "namespace" not in props
    assert (props["prompt_tokens"], props["completion_tokens"], props["calls"]) == (5, 7, 2)
    assert props["outcome"] == "answered" and type(props["outcome"]) is str
    assert props["started_at"] == "2025-01-02T03:04:05.678901+00:00"  # the query makes it one
    stored = {**props, "namespace": "ns", "started_at": neo4j.time.DateTime.from_native(T)}
    assert codec.from_props(Request, stored) == _request()


def test_other_offsets_survive_as_the_same_instant():
    lisbon = T.astimezone(timezone(timedelta(hours=1)))
    props = codec.to_props(_request(started_at=lisbon))
    back = codec.from_props(
        Request,
        {**props, "namespace": "ns", "started_at": neo4j.time.DateTime.from_native(lisbon)},
    )
    assert back.started_at == lisbon


def test_naive_timestamps_are_refused():
    with pytest.raises(ValidationFailed, match="started_at must be timezone-aware"):
        codec.to_props(_request(started_at=datetime(2025, 1, 1)))


def test_state_category_is_plain_text():
    state = StateNode(
        namespace="ns",
        id="r1.k",
        request_id="r1",
        key="k",
        category=Category.ARTIFACT,
        summary="s",
        content="c",
    )
    props = codec.to_props(state)
    assert props["category"] == "artifact" and type(props["category"]) is str


def test_malformed_stored_record_is_a_store_error():
    with pytest.raises(StoreError, match="stored Request 'r2' is malformed"):
        codec.from_props(Request, {"id": "r2", "namespace": "ns"})


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        ("request", "r12", ["r0", "R1", "r1\n", "r1.a", "", "r1 "]),
        ("state", "r12.hotel_budget", ["r1.o3", "r1.A", "r1.a\n", "r1", "r1.a`", "r1.a b"]),
        ("observation", "r12.o3", ["r1.o0", "r1.hotel", "r1.o3\n"]),
        ("decision", "r12.a3", ["r1.a0", "r1.o3", "r1.a3\n", "r1.A3", "r1.a"]),
    ],
)
def test_ids_are_checked_strictly(kind, good, bad):
    assert codec.check_id(kind, good) == good
    assert codec.kind_of(good) == kind
    for value in bad:
        with pytest.raises(ValidationFailed, match=f"invalid {kind} id"):
            codec.check_id(kind, value)


def test_non_strings_are_refused_as_ids():
    with pytest.raises(ValidationFailed):
        codec.check_id("state", 12)
    with pytest.raises(ValidationFailed):
        codec.kind_of(None)


def test_messages_cut_huge_input_short():
    message = codec.shown("x" * 5000)
    assert len(message) < 80 and message.endswith("...")


@pytest.mark.parametrize("ns", ["", "-lead", "a" * 129, "a b", "a\n", "ns`", "ns/x"])
def test_namespace_is_checked(ns):
    with pytest.raises(ValidationFailed, match="invalid namespace"):
        codec.check_namespace(ns)


def test_decision_cites_stay_a_list_of_ids():
    decision = ActionDecision(
        namespace="ns",
        id="r2.a1",
        request_id="r2",
        step=3,
        tool="book",
        cites=["r1.budget", "r2.hotel"],
        approved=False,
        reason="no",
        created_at=T,
    )
    props = codec.to_props(decision)
    assert props["cites"] == ["r1.budget", "r2.hotel"] and props["created_at"] == T.isoformat()
    stored = {**props, "namespace": "ns", "created_at": neo4j.time.DateTime.from_native(T)}
    assert codec.from_props(ActionDecision, stored) == decision


def test_surrogates_are_refused():
    with pytest.raises(ValidationFailed, match="surrogate"):
        codec.check_text("r1", "payload", "a\ud800")
