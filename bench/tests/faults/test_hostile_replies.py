"""Hostile strings from the model, through a real agent: refused with a clear message, or
stored inert and byte-equal. Refused ones add no node; no other namespace is touched."""

from __future__ import annotations

import json

import pytest

from flowstate import Outcome
from flowstate.rules import Limits
from flowstate.store import Repository, Store
from tests.neo4j.conftest import Raw
from tests.neo4j.engine_helpers import Harness, add, final, step, tool

pytestmark = pytest.mark.neo4j

INJECTIONS = [
    '"}) DETACH DELETE n //',
    "x`}) MATCH (n) DETACH DELETE n //",
    "`backtick` and `` double",
    "$(x) $(row.label) ${namespace}",
    "' OR 1=1 --",
    "State:Request {namespace: 'other'}",
]
UNICODE = [
    "\u202eRTL override\u202c and \u200fRLM",
    "zero\u200bwidth\u200d\u200c joiner \ufeff BOM",
    "e\u0301 combining, \U0001f9ed astral, \u05d0 Hebrew, \U0010fffd plane 16",
]
ODD = INJECTIONS + UNICODE
HUGE = ("\u05d0\u200b\U0001f600" * 7_000)[:20_000]


def echo(text: str) -> str:
    """Repeat the text."""
    return text


@pytest.fixture
def sentinel(store: Store, other_repo: Repository) -> Repository:
    Harness(store, other_repo.namespace).run([step([add("keep", "constraint")], action=final())])
    return other_repo


def _told(model, call: int) -> str:
    return model.calls[call].messages[-1]["content"].split("# Rejected at your previous step")[-1]


def test_hostile_keys_and_ids_are_refused_and_add_nothing(
    store: Store, repo: Repository, raw: Raw, sentinel: Repository
) -> None:
    before = sentinel.bundles()
    h = Harness(store, repo.namespace)
    steps = [step([add(bad)]) for bad in [*ODD, HUGE]]
    steps += [
        step([add("ok", relations=[{"type": "DEPENDS_ON", "target": bad}])]) for bad in ODD[:3]
    ]
    steps += [step([add("ok", evidence=[ODD[0]])]), step(access=ODD[:4])]
    steps += [step(action=tool(ODD[0]))]  # an unknown tool named by an injection
    refused = len(steps)
    steps += [step(action=final("nothing kept", "Hostile ids"))]
    result, model = h.run(steps, tools=[echo], max_steps=len(steps))
    assert result.outcome is Outcome.ANSWERED and result.states_added == []
    for call in range(1, len(ODD) + 2):
        assert "key must be snake_case" in _told(model, call)
    assert "is not visible: use a key of this request" in _told(model, len(ODD) + 2)
    assert "is not an observation of this request" in _told(model, len(ODD) + 5)
    assert "unknown id: only ids shown in the index" in _told(model, len(ODD) + 6)
    assert "unknown tool" in _told(model, len(ODD) + 7)
    assert result.rejections >= refused
    assert raw.count(repo.namespace) == (1, 0)  # the request node and nothing else
    assert sentinel.bundles() == before


def test_hostile_text_is_stored_inert_and_byte_equal(
    store: Store, repo: Repository, raw: Raw, sentinel: Repository
) -> None:
    before = sentinel.bundles()
    texts = [*ODD, HUGE]
    contents = [(text + "\n" + text)[:20_000] for text in texts]
    deltas = [
        add(f"t{i}", "decision", text[:200], contents[i], evidence=[f"r1.o{i + 1}"])
        for i, text in enumerate(texts)
    ]
    steps = [step(action=tool("echo", text=text)) for text in texts]
    steps += [step(deltas[:10]), step(deltas[10:], action=final(ODD[0], ODD[1]))]
    h = Harness(store, repo.namespace)
    limits = Limits(max_content_chars=20_000)
    result, _ = h.run(steps, tools=[echo], max_steps=len(steps), limits=limits)
    assert result.outcome is Outcome.ANSWERED and result.rejections == 0
    [bundle] = repo.bundles()
    states = {s.key: s for s in bundle.states}
    for i, text in enumerate(texts):
        state = states[f"t{i}"]
        assert state.summary.encode() == text[:200].strip().encode()
        assert state.content.encode() == contents[i].encode()
    for i, obs in enumerate(sorted(bundle.observations, key=lambda o: int(o.id.split("o")[-1]))):
        assert obs.output.encode() == texts[i].encode()
        assert json.loads(obs.arguments) == {"text": texts[i]}
    assert (bundle.request.answer, bundle.request.summary) == (ODD[0], ODD[1])
    labels = raw.rows(
        "MATCH (n {namespace: $ns}) RETURN DISTINCT labels(n) AS l", ns=repo.namespace
    )
    assert sorted(sorted(r["l"]) for r in labels) == [
        ["Decision", "State"], ["Namespace"], ["Observation"], ["Request"]
    ]  # fmt: skip
    n = len(texts)
    assert raw.count(repo.namespace) == (1 + 2 * n, 2 * n + n)  # PRODUCED x2n, EVIDENCED_BY xn
    assert sentinel.bundles() == before


def test_escaped_lone_surrogates_are_refused_with_a_message(
    store: Store, repo: Repository, raw: Raw, sentinel: Repository
) -> None:
    before = sentinel.bundles()
    lone = "\ud800 lone"  # json.dumps escapes it: the reply text is valid UTF-8
    replies = [
        json.dumps(step([add("k", summary=lone)])),
        json.dumps(step(access=[lone])),
        json.dumps(step(action=tool("echo", text=lone))),
        json.dumps(step(action=final(lone))),
        json.dumps(step([add("fine")], action=final("ok", "Surrogates refused"))),
    ]
    assert all("\\ud800" in r for r in replies[:4])
    h = Harness(store, repo.namespace)
    result, model = h.run(replies, tools=[echo], max_steps=5, max_malformed=5)
    assert result.outcome is Outcome.ANSWERED and result.states_added == ["r1.fine"]
    wheres = ["delta[0].summary", "access[0]", "action.arguments.text", "action.answer"]
    for call, where in enumerate(wheres, start=1):
        assert f"{where}: text contains a lone surrogate" in _told(model, call)
    assert raw.count(repo.namespace) == (2, 1)
    assert sentinel.bundles() == before
