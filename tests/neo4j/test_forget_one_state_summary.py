"""A request with one state and no SUMMARY takes its state's summary. Forgetting or expiring
that state must leave none of its text behind: not on the request, in the index, the history
or an export."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flowstate import FlowState, RetentionPolicy, ScriptedModel
from flowstate.settings import Neo4jSettings

pytestmark = pytest.mark.neo4j

SECRET = "Door code is 4417-SECRET"


@pytest.fixture
def fs(neo4j_settings: Neo4jSettings, namespace: str) -> Iterator[FlowState]:
    with FlowState.connect(settings=neo4j_settings, namespace=namespace) as front:
        yield front
        front.repository.forget_namespace(force=True)


def _one_state_request(fs: FlowState) -> str:
    """A request whose model gave one state and no SUMMARY, run by the agent loop."""
    step = {
        "delta": [
            {"op": "add", "key": "code", "category": "environment", "summary": SECRET,
             "content": "Given at the front desk"},
        ],
        "action": {"type": "final", "answer": "Noted"},
    }  # fmt: skip
    with ScriptedModel.sequence(f"one_{fs.namespace}", [step]) as model:
        result = fs.agent(model=model).run("Remember the door code")
    assert fs.history()[-1].summary == SECRET  # the request took its state's summary
    return result.states_added[0]


def _nothing_left(fs: FlowState) -> None:
    assert SECRET not in fs.index().text
    assert all(SECRET not in (r.summary or "") for r in fs.history())
    assert not any(SECRET in line for line in fs.export_jsonl())


def test_forgetting_the_only_state_leaves_its_summary_nowhere(fs: FlowState) -> None:
    fs.forget(_one_state_request(fs))
    _nothing_left(fs)


def test_expiring_the_only_state_leaves_its_summary_nowhere(fs: FlowState) -> None:
    _one_state_request(fs)
    fs.apply_retention(RetentionPolicy.parse('{"environment": 0}'))
    _nothing_left(fs)


def test_a_summary_the_model_gave_stays_when_the_state_goes(fs: FlowState) -> None:
    session = fs.begin("Remember the door code")
    session.record([{"op": "add", "key": "code", "category": "environment", "summary": SECRET,
                     "content": "Given at the front desk"}])  # fmt: skip
    [state] = session.commit("Noted", "Door code noted").states_added
    fs.forget(state)
    _nothing_left(fs)
    assert fs.history()[-1].summary == "Door code noted"
