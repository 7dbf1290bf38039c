"""A step's reveal takes what was found into the Active State; only when something asked for
was forgotten since does it go through the whole Active State to drop what is gone (a full
dump and re-read, which would otherwise sit on every reveal step's critical path). No I/O."""

from __future__ import annotations

from typing import Any

import pytest

from flowstate.engine.driver import CallModel, Done, Progress, Reveal, Revealed, Start, StepDriver
from flowstate.engine.index import RenderedIndex
from flowstate.engine.step import AgentConfig, StepLogic
from flowstate.llm.client import Completion
from flowstate.models import StateNode, StepOutput, Usage
from flowstate.models.active import ActiveState
from flowstate.models.views import RevealedState
from flowstate.store import drafts


def _past(key: str) -> RevealedState:
    state = StateNode(namespace="ns", id=f"r1.{key}", request_id="r1", key=key,
                      category="environment", summary=key, content=f"all about {key}")  # fmt: skip
    return RevealedState(state=state, relations=[])


def _run(found: list[str], missing: list[str]) -> ActiveState:
    active = ActiveState(namespace="ns", request_id="r2", seq=2, text="plan")
    index = RenderedIndex(text="r1: x", tokens=3, budget=2000, collapsed=frozenset(),
                          state_ids=frozenset({"r1.a", "r1.b"}))  # fmt: skip
    driver = StepDriver(active, index, StepLogic([], AgentConfig()), start=Start.DRAFT)
    replies = [StepOutput.model_validate({"access": ["r1.a", "r1.b"]})]
    command = driver.start()
    while not isinstance(command, Progress):
        outcome: Any = None
        if isinstance(command, CallModel):
            outcome = Completion("", replies.pop(0), Usage(calls=1))
        elif isinstance(command, Reveal):
            outcome = Revealed(states=[_past(k) for k in found], missing=missing)
        assert not isinstance(command, Done)
        command = driver.send(outcome)
    return active


def test_a_reveal_with_nothing_missing_does_not_rewrite_the_active_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scrubbed: list[str] = []
    real = drafts.scrub

    def counted(payload: str, gone: Any) -> str | None:
        scrubbed.append(payload)
        return real(payload, gone)

    monkeypatch.setattr(drafts, "scrub", counted)
    active = _run(found=["a", "b"], missing=[])
    assert sorted(active.revealed) == ["r1.a", "r1.b"]
    assert scrubbed == []
    active = _run(found=["a"], missing=["r1.b"])  # forgotten since it was shown
    assert sorted(active.revealed) == ["r1.a"] and len(scrubbed) == 1
    assert any("r1.b" in r and "forgotten since it was shown" in r for r in active.rejections)
