"""JSON Lines encoding and validation, without a database."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from flowstate.errors import ValidationFailed
from flowstate.models import (
    ActionDecision,
    Category,
    Evidence,
    Observation,
    Outcome,
    Relation,
    RelationType,
    Request,
    RequestBundle,
    StateNode,
)
from flowstate.store.export import bundle_lines, parse_lines

T = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def _bundle(ns: str, seq: int, keys=("a",), rels=(), text="plain", cites=()) -> RequestBundle:
    rid = f"r{seq}"
    return RequestBundle(
        request=Request(
            namespace=ns,
            id=rid,
            seq=seq,
            text=text,
            summary="s",
            outcome=Outcome.ANSWERED,
            started_at=T,
            finished_at=T,
        ),
        states=[
            StateNode(
                namespace=ns,
                id=f"{rid}.{k}",
                request_id=rid,
                key=k,
                category=Category.DECISION,
                summary=f"sum {k}",
                content=text,
                created_at=T,
                updated_at=T,
            )
            for k in keys
        ],
        observations=[
            Observation(
                namespace=ns,
                id=f"{rid}.o1",
                request_id=rid,
                step=1,
                tool="t",
                output=text,
                created_at=T,
            )
        ],
        relations=[Relation(type=t, source=a, target=b) for t, a, b in rels],
        evidence=[Evidence(state=f"{rid}.{keys[0]}", observation=f"{rid}.o1")],
        decisions=[
            ActionDecision(
                namespace=ns,
                id=f"{rid}.a1",
                request_id=rid,
                step=2,
                tool="book",
                arguments='{"q":"' + text + '"}',
                cites=[f"{rid}.{keys[0]}", *cites],
                approved=seq % 2 == 1,
                reason=text,
                created_at=T,
            )
        ],
    )


@pytest.fixture
def bundles():
    return [
        _bundle("a", 1, keys=("x", "y"), text="caf\u00e9 \u2028 \x00 \U0001f600"),
        _bundle("a", 2, rels=[(RelationType.SUPERSEDES, "r2.a", "r1.x")], cites=["r1.y"]),
    ]


def test_lines_round_trip_into_another_namespace(bundles):
    lines = list(bundle_lines(bundles))
    assert all(line.endswith("\n") and line.count("\n") == 1 for line in lines)
    assert all(line.isascii() for line in lines)
    assert [json.loads(line)["kind"] for line in lines[:6]] == [
        "request",
        "state",
        "state",
        "observation",
        "evidence",
        "decision",
    ]
    assert all("namespace" not in json.loads(line) for line in lines)
    back = parse_lines(lines, "b")
    assert list(bundle_lines(back)) == lines
    assert back[0].request.namespace == "b"
    assert back[0].states[0].content == bundles[0].states[0].content
    assert back[1].decisions[0].cites == ["r2.a", "r1.y"]
    assert back[1].decisions[0].namespace == "b"


def test_blank_lines_are_skipped_and_order_does_not_matter(bundles):
    lines = list(bundle_lines(bundles))
    shuffled = [*lines[6:], "\n", *lines[:6], "   \n"]
    assert parse_lines(shuffled, "b") == parse_lines(lines, "b")


def _lines(bundles) -> list[str]:
    return list(bundle_lines(bundles))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda ls: ls.__setitem__(2, "{not json\n"), r"line 3: not JSON"),
        (lambda ls: ls.__setitem__(2, "[1, 2]\n"), r"line 3: expected a JSON object"),
        (lambda ls: ls.__setitem__(2, '{"kind": "label"}\n'), r"line 3: kind 'label' is not one"),
        (lambda ls: ls.__setitem__(2, '{"id": "r1.x"}\n'), r"line 3: kind None is not one"),
        (
            lambda ls: ls.__setitem__(
                1, ls[1].replace('"kind":"state"', '"kind":"state","namespace":"x"')
            ),
            r"line 2: records must not carry a namespace",
        ),
        (
            lambda ls: ls.__setitem__(
                1, ls[1].replace('"key":"x"', '"key":"x`}) DETACH DELETE n //"')
            ),
            r"line 2: invalid state: key",
        ),
        (lambda ls: ls.append(ls[1]), r"line 13: r1.x is already on line 2"),
        (lambda ls: ls.pop(0), r"line 1: state of request r1, not in the file"),
        (
            lambda ls: ls.append(
                '{"kind":"relation","type":"REFINES","source":"r1.x","target":"r1.nope"}\n'
            ),
            r"line 13: relation target r1.nope is not a state in the file",
        ),
        (
            lambda ls: ls.extend(
                [
                    '{"kind":"relation","type":"REFINES","source":"r1.x","target":"r2.a"}\n',
                    '{"kind":"relation","type":"REFINES","source":"r2.a","target":"r1.y"}\n',
                ]
            ),
            r"requests r1, r2 relate to each other in a cycle",
        ),
        (
            lambda ls: ls.append(
                '{"kind":"relation","type":"OWNS","source":"r1.x","target":"r1.y"}\n'
            ),
            r"line 13: invalid relation: type",
        ),
        (
            lambda ls: ls.__setitem__(
                0,
                ls[0].replace(
                    '"started_at":"2025-01-02T03:04:05Z"', '"started_at":"2025-01-02T03:04:05"'
                ),
            ),
            r"line 1: r1: started_at must be timezone-aware",
        ),
        (
            lambda ls: ls.append('{"kind":"evidence","state":"r1.y","observation":"r1.o9"}\n'),
            r"request r1 \(line 1\) is inconsistent: evidence r1.y -> r1.o9 is not inside r1",
        ),
        (
            lambda ls: ls.__setitem__(11, ls[11].replace('"r1.y"', '"r1.gone"')),
            r"line 12: state r1.gone cited by r2.a1 is not a state in the file",
        ),
        (
            lambda ls: ls.__setitem__(5, ls[5].replace('"cites":["r1.x"]', '"cites":["r1.o1"]')),
            r"line 6: invalid decision: cited ids are not state ids",
        ),
        (
            lambda ls: ls.__setitem__(5, ls[5].replace('"id":"r1.a1"', '"id":"r1.a1`"')),
            r"line 6: invalid decision: id",
        ),
    ],
    ids=[
        "json",
        "array",
        "kind",
        "no-kind",
        "namespace",
        "hostile-key",
        "duplicate",
        "orphan",
        "target",
        "cycle",
        "bad-type",
        "naive-time",
        "bad-evidence",
        "cite-missing",
        "cite-observation",
        "bad-decision-id",
    ],
)
def test_bad_lines_are_named(bundles, edit, message):
    lines = _lines(bundles)
    edit(lines)
    with pytest.raises(ValidationFailed, match=message):
        parse_lines(lines, "b")
