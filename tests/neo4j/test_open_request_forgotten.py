"""A request opened by a running request, then forgotten by another process: its text is
scrubbed from the draft in the forgetting transaction, and the running request's next save
must not write it back (as it does not write back a forgotten state's content). Drafts are
read with a driver of our own, not through the code under test."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from flowstate import FlowState, ScriptedModel
from flowstate.store import Store
from tests.neo4j.conftest import Raw
from tests.neo4j.engine_helpers import LONG_TAIL, add, final, step

pytestmark = pytest.mark.neo4j

SECRET = "Book the clinic under my real name, Ana Maria Silva"
STATE_SECRET = f"Ana Maria Silva's clinic appointment is on Friday{LONG_TAIL}"


def _draft(raw: Raw, namespace: str) -> str:
    [row] = raw.rows("MATCH (d:Draft {namespace: $ns}) RETURN d.payload AS p", ns=namespace)
    return str(row["p"])


def _remember(fs: FlowState) -> None:
    fs.remember([add("clinic", summary="Clinic appointment asked")], SECRET, summary="Clinic")
    fs.remember(
        [add("when", summary="Appointment on Friday", content=STATE_SECRET)],
        "when is it",
        summary="When",
    )


def test_a_session_does_not_save_back_a_request_text_forgotten_by_another_process(
    store: Store, namespace: str, raw: Raw
) -> None:
    fs = FlowState(store, namespace)
    _remember(fs)
    other = FlowState(store, namespace)  # another front door: it does not tell the session
    session = fs.begin("What did I ask about the clinic?")
    opened = session.reveal(["r1", "r2.when"])
    assert opened.request_texts == {"r1": SECRET} and not opened.rejections
    assert SECRET in _draft(raw, namespace) and STATE_SECRET in _draft(raw, namespace)

    other.forget("r1")
    other.forget("r2.when")
    assert SECRET not in _draft(raw, namespace)  # scrubbed in the forgetting transaction

    recorded = session.record([add("note", summary="A note of this request")])
    assert recorded.applied
    draft = _draft(raw, namespace)
    assert STATE_SECRET not in draft  # the forgotten state's copy stays out
    assert SECRET not in draft  # and so must the forgotten request's text
    session.discard()


def test_an_agent_does_not_save_back_a_request_text_forgotten_by_another_process(
    store: Store, namespace: str, raw: Raw
) -> None:
    fs = FlowState(store, namespace)
    _remember(fs)
    other = FlowState(store, namespace)
    drafts: list[str] = []

    def policy(messages: list[dict[str, Any]]) -> dict:
        calls = len(model.calls)
        if calls == 0:
            return step(access=["r1"])
        if calls == 1:  # r1 is open (its draft may still be landing): another process forgets it
            other.forget("r1")
            return step([add("one", summary="First note of this request")])
        if calls in (2, 3):  # each of these steps saves the draft again
            return step([add(f"n{calls}", summary=f"Note {calls} of this request")])
        drafts.append(_draft(raw, namespace))
        return step(action=final())

    with ScriptedModel.policy(f"orf_{uuid.uuid4().hex[:8]}", policy) as model:
        result = fs.agent(model.client()).run("What did I ask about the clinic?")
    assert result.error is None
    assert drafts and SECRET not in drafts[0]


def test_opening_eight_listed_requests_keeps_later_prompts_within_eight_states_worth(
    store: Store, namespace: str
) -> None:
    """One legal ACCESS of 8 listed request ids must not make every later call of the request
    cost more than 8 revealed states could (8 x `Limits.max_content_chars`, plus the rest of
    the prompt): a prompt past the model's context fails every later call, and a resume
    sends the same prompt again, so the request could only be discarded."""
    fs = FlowState(store, namespace)
    for i in range(1, 9):
        text = f"paragraph {i} " + "lorem ipsum dolor sit amet " * 4000
        fs.remember([add(f"k{i}", summary=f"Fact {i}")], text[:100_000], summary=f"Big {i}")
    steps = [step(access=[f"r{i}" for i in range(1, 9)]), step(action=final())]
    with ScriptedModel.sequence(f"orf_{uuid.uuid4().hex[:8]}", steps) as model:
        result = fs.agent(model.client()).run("omega")
    assert result.error is None and not result.rejections
    later = model.calls[1]
    prompt = "".join(str(m["content"]) for m in later.messages)
    assert len(prompt) < 8 * 4_000 + 10_000, f"a later call's prompt has {len(prompt)} characters"
