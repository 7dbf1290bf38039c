"""The guard of consequential calls, without I/O: staleness on the whole visible graph, and an
approver that must say exactly True."""

from __future__ import annotations

from typing import Any

import pytest

from flowstate.engine.commit import bundle_of
from flowstate.engine.driver import approver_outcome
from flowstate.engine.guard import superseded
from flowstate.engine.step import AgentConfig, Approval, StepLogic
from flowstate.engine.tools import Tool
from flowstate.llm.client import Completion
from flowstate.models import Category, Outcome, StateNode, StepOutput, Usage
from flowstate.models.active import ActiveState
from flowstate.models.records import Relation, utcnow
from flowstate.models.views import RelationView, RevealedState
from flowstate.models.vocab import RelationType
from flowstate.rules import Visibility

NS = "guard"


def pay(amount: int) -> str:
    """Pay."""
    return f"paid {amount}"


def _state(rid: str, key: str) -> StateNode:
    return StateNode(
        namespace=NS,
        id=f"{rid}.{key}",
        request_id=rid,
        key=key,
        category=Category.CONSTRAINT,
        summary=f"{key} of {rid}",
        content=f"{key} content",
    )


def _revealed(rid: str, key: str, *relations: tuple[str, str, str]) -> RevealedState:
    views = [RelationView(type=t, direction=d, other=o) for t, d, o in relations]
    return RevealedState(state=_state(rid, key), relations=views)


def _active(**fields: Any) -> ActiveState:
    return ActiveState(namespace=NS, request_id="r5", seq=5, text="pay it", **fields)


def _pay(active: ActiveState, cites: list[str], approve: Any = lambda _a: True) -> str | None:
    """Absorb one step that pays citing `cites`; the refusal told, or None when it may run."""
    logic = StepLogic([Tool.from_function(pay, consequential=True)], AgentConfig())
    logic.has_approver = approve is not None
    out = StepOutput.model_validate(
        {"action": {"type": "tool", "name": "pay", "arguments": {"amount": 10}, "cites": cites}}
    )
    vis = Visibility(
        request_id="r5",
        index_states=frozenset(active.revealed),
        collapsed_requests=frozenset(),
        revealed=frozenset(active.revealed),
    )
    verdict, report = logic.absorb(active, Completion("{}", out, Usage()), vis)
    if verdict.approval is not None:  # what the driver's Approve command does
        logic.decide(active, verdict.approval, approver_outcome(approve, verdict.approval), report)
    if active.pending_call is not None:
        assert active.decisions[-1].approved
        return None
    assert not active.decisions[-1].approved
    return active.decisions[-1].reason


def _refused(active: ActiveState, cites: list[str], approve: Any = lambda _a: True) -> str:
    """The refusal `_pay` told; failing when the call may run."""
    refusal = _pay(active, cites, approve)
    assert refusal is not None, "expected the call to be refused"
    return refusal


def test_a_past_state_superseded_in_this_request_is_stale() -> None:
    active = _active(
        revealed={"r1.budget": _revealed("r1", "budget")},
        states={"budget": _state("r5", "budget")},
        relations=[Relation(type=RelationType.SUPERSEDES, source="r5.budget", target="r1.budget")],
    )
    refusal = _pay(active, ["r1.budget"])
    assert refusal == (
        "pay: cited states are stale: r1.budget (SUPERSEDED by r5.budget); cite the current ones"
    )
    assert _pay(active, ["r5.budget"]) is None  # the current one passes


def test_a_state_of_this_request_is_cited_by_its_key_as_a_relation_target_names_it() -> None:
    active = _active(states={"budget": _state("r5", "budget")})
    assert _pay(active, ["budget"]) is None
    assert active.decisions[-1].cites == ["r5.budget"]  # recorded by its id
    unknown = _active(states={"budget": _state("r5", "budget")})
    assert _refused(unknown, ["hotel"]) == "pay: cited ids are not in the Active State: r5.hotel"


def test_a_supersession_seen_from_the_newer_revealed_state_makes_the_older_stale() -> None:
    # r1.budget was revealed before r3.budget superseded it; r3's own relations say so.
    active = _active(
        revealed={
            "r1.budget": _revealed("r1", "budget"),
            "r3.budget": _revealed("r3", "budget", ("SUPERSEDES", "out", "r1.budget")),
        }
    )
    assert "r1.budget (SUPERSEDED by r3.budget)" in _refused(active, ["r1.budget"])


def test_a_committed_supersession_still_counts() -> None:
    active = _active(
        revealed={"r1.budget": _revealed("r1", "budget", ("SUPERSEDES", "in", "r2.b"))}
    )
    assert "r1.budget (SUPERSEDED by r2.b)" in _refused(active, ["r1.budget"])


def test_a_state_of_this_request_superseded_by_another_of_it_is_stale() -> None:
    # The rules refuse SUPERSEDES between own states today; the guard must not rely on that.
    active = _active(
        states={"old": _state("r5", "old"), "new": _state("r5", "new")},
        relations=[Relation(type=RelationType.SUPERSEDES, source="r5.new", target="r5.old")],
    )
    assert "r5.old (SUPERSEDED by r5.new)" in _refused(active, ["r5.new", "r5.old"])
    assert superseded(active) == {"r5.old": {"r5.new"}}


class _Truthy:
    def __bool__(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("verdict", "reason"),
    [
        (1, "pay: the approver returned int, not True; denied"),
        ("yes", "pay: the approver returned str, not True; denied"),
        (_Truthy(), "pay: the approver returned _Truthy, not True; denied"),
        (None, "pay: the approver returned NoneType, not True; denied"),
        (False, "pay was denied by the approver"),
    ],
)
def test_only_exactly_true_approves(verdict: object, reason: str) -> None:
    active = _active(states={"plan": _state("r5", "plan")})
    assert _pay(active, ["r5.plan"], lambda _a: verdict) == reason
    assert active.rejections == [reason]


def test_an_approver_that_raises_denies_and_the_request_goes_on() -> None:
    asked: list[Approval] = []

    def broken(approval: Approval) -> bool:
        asked.append(approval)
        raise RuntimeError("approval service down " + "x" * 5_000)

    active = _active(states={"plan": _state("r5", "plan")})
    refusal = _refused(active, ["r5.plan"], broken)
    assert refusal.startswith("pay: the approver failed (RuntimeError: approval service down x")
    assert refusal.endswith("xxx); denied") and "characters cut]" in refusal
    assert len(refusal) < 1_100  # bounded, the verdict kept
    assert len(asked) == 1 and active.pending_call is None
    assert active.decisions[-1].cites == ["r5.plan"]
    assert active.step == 1  # absorbed, not raised


def test_a_decision_citing_many_states_removed_later_still_fits_its_record() -> None:
    keys = [f"state_{'x' * 50}_{i}" for i in range(60)]
    active = _active(states={k: _state("r5", k) for k in keys})
    assert _pay(active, [f"r5.{k}" for k in keys]) is None
    active.states = {}  # all removed later in the request
    bundle = bundle_of(active, Outcome.ANSWERED, "", "", utcnow())
    [decision] = bundle.decisions
    assert decision.cites == [] and len(decision.reason) == 2_000
    type(bundle).model_validate(bundle.model_dump())  # what the commit re-validates


def test_a_call_with_invalid_arguments_is_refused_before_the_approver_is_asked() -> None:
    active = _active(states={"plan": _state("r5", "plan")})
    logic = StepLogic([Tool.from_function(pay, consequential=True)], AgentConfig())
    logic.has_approver = True
    out = StepOutput.model_validate(
        {
            "action": {
                "type": "tool",
                "name": "pay",
                "arguments": {"amount": "a lot", "evil": 1},
                "cites": ["r5.plan"],
            }
        }
    )
    vis = Visibility(request_id="r5", index_states=frozenset(), collapsed_requests=frozenset())
    verdict, report = logic.absorb(active, Completion("{}", out, Usage()), vis)
    assert verdict.approval is None and active.pending_call is None  # nobody is asked
    [decision] = active.decisions
    assert not decision.approved and decision.reason.startswith("invalid arguments for pay")
