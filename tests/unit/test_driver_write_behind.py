"""The draft between steps rides along with the next model call (write-behind), while a tool
call and the commit still wait for a durable draft (write-ahead). No I/O: the driver alone."""

from __future__ import annotations

from typing import Any

from flowstate.engine.driver import (
    CallModel,
    Done,
    RunTool,
    Start,
    StepDriver,
)
from flowstate.engine.index import RenderedIndex
from flowstate.engine.step import AgentConfig, StepLogic
from flowstate.engine.tools import ToolResult
from flowstate.llm.client import Completion
from flowstate.models import StepOutput, Usage
from flowstate.models.active import ActiveState


def lookup(city: str) -> str:
    """Look a city up."""
    return f"{city}: 3 hotels"


STEPS: list[dict[str, Any]] = [
    {"delta": [{"op": "add", "key": "a", "category": "constraint", "summary": "a",
                "content": "a"}]},
    {"action": {"type": "tool", "name": "lookup", "arguments": {"city": "Porto"}}},
    {"action": {"type": "final", "answer": "done", "summary": "s"}},
]  # fmt: skip


def _commands(start: Start) -> list[Any]:
    active = ActiveState(namespace="ns", request_id="r1", seq=1, text="plan")
    index = RenderedIndex(
        text="", tokens=0, budget=2000, collapsed=frozenset(), state_ids=frozenset()
    )
    driver = StepDriver(active, index, StepLogic([lookup], AgentConfig()), start=start)
    replies = [StepOutput.model_validate(s) for s in STEPS]
    seen: list[Any] = []
    command = driver.start()
    while not isinstance(command, Done):
        seen.append(command)
        if isinstance(command, CallModel):
            outcome: Any = Completion("", replies.pop(0), Usage(calls=1))
        elif isinstance(command, RunTool):
            outcome = ToolResult("Porto: 3 hotels", False)
        else:
            outcome = None
        command = driver.send(outcome)
    return seen


def test_between_steps_the_draft_is_saved_with_the_next_model_call() -> None:
    seen = _commands(Start.NEW)
    kinds = [type(c).__name__ for c in seen]
    assert kinds == [
        "SaveDraft",  # the request's start: durable before the first call
        "CallModel",
        "Progress",
        "CallModel",  # carries step 1's draft
        "SaveDraft",  # write-ahead: durable before the tool runs
        "RunTool",
        "Progress",
        "CallModel",  # carries step 2's draft, with the tool's result
        "SaveDraft",  # the finish, durable before the commit
        "Commit",
        "Progress",
    ]
    calls = [c for c in seen if isinstance(c, CallModel)]
    assert calls[0].save is None
    assert calls[1].save is not None and '"r1.a"' in calls[1].save.payload
    assert calls[2].save is not None and "Porto: 3 hotels" in calls[2].save.payload


def test_a_request_picked_up_from_its_draft_saves_nothing_before_its_first_call() -> None:
    first = _commands(Start.DRAFT)[0]
    assert isinstance(first, CallModel) and first.save is None


def test_a_request_picked_up_in_memory_is_saved_with_its_first_call() -> None:
    """After a database failure the draft on record may be older than the Active State."""
    first = _commands(Start.INFLIGHT)[0]
    assert isinstance(first, CallModel) and first.save is not None


def test_a_driver_that_failed_says_so_at_its_next_use() -> None:
    import pytest

    from flowstate.errors import FlowStateError

    active = ActiveState(namespace="ns", request_id="r1", seq=1, text="plan")
    index = RenderedIndex(
        text="", tokens=0, budget=2000, collapsed=frozenset(), state_ids=frozenset()
    )
    driver = StepDriver(active, index, StepLogic([lookup], AgentConfig()), start=Start.DRAFT)
    assert isinstance(driver.start(), CallModel)
    with pytest.raises(AttributeError):
        driver.send("not a completion")  # a shell's bug, inside the machine
    with pytest.raises(FlowStateError, match="driver failed earlier .*AttributeError"):
        driver.send(Completion("", StepOutput(), Usage(calls=1)))


def test_a_done_driver_refuses_more() -> None:
    import pytest

    from flowstate.errors import FlowStateError

    seen = _commands(Start.DRAFT)
    assert seen  # ran to Done
    active = ActiveState(namespace="ns", request_id="r1", seq=1, text="plan")
    index = RenderedIndex(
        text="", tokens=0, budget=2000, collapsed=frozenset(), state_ids=frozenset()
    )
    driver = StepDriver(active, index, StepLogic([lookup], AgentConfig()), start=Start.DRAFT)
    driver.start()
    final = StepOutput.model_validate(STEPS[2])
    command = driver.send(Completion("", final, Usage(calls=1)))
    while not isinstance(command, Done):
        command = driver.send(None)
    with pytest.raises(FlowStateError, match="is done"):
        driver.send(None)
