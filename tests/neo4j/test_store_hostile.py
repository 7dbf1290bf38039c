"""Hostile strings: refused as keys and ids, stored inert and byte-equal as text."""

from __future__ import annotations

import pytest

from flowstate.errors import ValidationFailed
from flowstate.models import RequestBundle, StateNode
from flowstate.models.records import (
    LINE_BREAKS,
    MAX_CONTENT_CHARS,
    MAX_OBSERVATION_CHARS,
    MAX_SUMMARY_CHARS,
)
from flowstate.store import Repository

pytestmark = pytest.mark.neo4j

HOSTILE = [
    "'",
    '"',
    "`",
    "x`}) DETACH DELETE n //",
    "'}) MATCH (n) DETACH DELETE n //",
    "$(x)",
    "$(row.label)",
    "State:Request",
    "\x00",
    "r1.a\x00b",
    "\u202e\u200d\ufeff",
    "r1.\u0430",  # Cyrillic a
    "r1.a\n",
    "a" * 10_000,
]


@pytest.mark.parametrize("bad", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_ids_are_refused_before_any_query(repo, bad):
    calls = [
        lambda: repo.reveal([bad]),
        lambda: repo.expand([bad]),
        lambda: repo.get_state(bad),
        lambda: repo.get_request(bad),
        lambda: repo.get_observation(bad),
        lambda: repo.forget_state(bad),
        lambda: repo.forget_request(bad),
        lambda: repo.request_states(bad),
        lambda: repo.save_draft(bad, "{}", owner="w", first=True),
        lambda: repo.discard_draft(bad),
    ]
    for call in calls:
        with pytest.raises(ValidationFailed, match="invalid") as info:
            call()
        assert len(str(info.value)) < 300  # a huge input is cut short in the message


@pytest.mark.parametrize("bad", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_namespaces_are_refused(store, bad):
    with pytest.raises(ValidationFailed, match="invalid namespace"):
        Repository(store, bad)


@pytest.mark.parametrize("bad", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_keys_are_refused_by_the_models(make, bad):
    with pytest.raises(ValueError, match="key|id"):
        make.state("r1", bad)


TEXTS = [
    'it\'s "quoted" and `ticked`',
    "x`}) DETACH DELETE n //",
    "'}) MATCH (n) DETACH DELETE n RETURN 1 //",
    "$(x) $(row.label) {namespace: 'other'}",
    "nul \x00 inside",
    "rtl \u202e zwj \u200d bom \ufeff emoji \U0001f9ed combining e\u0301 line-sep \u2028",
    "\U0010fffd private plane and \ufffe noncharacter",
]


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_hostile_text_is_stored_inert_and_byte_equal(repo, make, raw, text):
    line = "".join(" " if ch in LINE_BREAKS else ch for ch in text)  # summaries are one line
    state = make.state("r1", "note", summary=line, content=text + "\n" + text)
    obs = make.observation(
        "r1", 1, output=text, arguments='{"q": "' + text.replace('"', "'") + '"}'
    )
    repo.commit(
        make.bundle(1, states=[state], observations=[obs], summary=text, text=text, answer=text)
    )
    assert repo.get_state("r1.note") == state
    assert repo.get_observation("r1.o1") == obs
    assert repo.get_request("r1").summary == text
    assert repo.index()[0].states[0].summary == line
    assert repo.reveal(["r1.note"])[0].state.content.encode() == (text + "\n" + text).encode()
    labels = raw.rows("MATCH (s:State {namespace: $ns}) RETURN labels(s) AS l", ns=repo.namespace)
    assert sorted(labels[0]["l"]) == ["Environment", "State"]
    assert raw.count(repo.namespace) == (3, 2)


def test_huge_odd_unicode_content_round_trips(repo, make):
    unit = "\U0001f600e\u0301\u05d0\x00"
    content = (unit * (MAX_CONTENT_CHARS // len(unit)))[:MAX_CONTENT_CHARS]
    state = make.state("r1", "big", content=content, summary="\u05d0" * MAX_SUMMARY_CHARS)
    obs = make.observation("r1", 1, output=(unit * 50_000)[:MAX_OBSERVATION_CHARS])
    repo.commit(make.bundle(1, states=[state], observations=[obs]))
    assert repo.get_state("r1.big").content == content
    assert repo.get_observation("r1.o1").output == obs.output


def test_lone_surrogates_are_refused_clearly(repo, make):
    # The models refuse them; a record built around validation is caught at the boundary.
    good = make.state("r1", "bad")
    state = StateNode.model_construct(**{**dict(good), "content": "half \ud800 a pair"})
    bundle = RequestBundle.model_construct(
        request=make.request(1), states=[state], relations=[], observations=[], evidence=[]
    )
    with pytest.raises(ValidationFailed, match="content"):
        repo.commit(bundle)
    with pytest.raises(ValidationFailed, match="surrogate"):
        repo.save_draft("r1", '{"x": "\ud800"}', owner="w", first=True)
    assert repo.counts().nodes == 0
