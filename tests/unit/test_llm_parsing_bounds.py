"""Replies nested too deep or too large are refused by the parser with a reason; nothing
escapes it, and what it accepts can always be kept in a draft and read back."""

from __future__ import annotations

import json
import sys

import pytest

from flowstate.llm.parsing import MAX_REPLY_CHARS, MAX_REPLY_DEPTH, parse_step
from flowstate.models import StepOutput
from flowstate.models.active import ActiveState
from flowstate.models.step import MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH


def _call_with(value: str) -> str:
    return '{"action": {"type": "tool", "name": "t", "arguments": {"x": ' + value + "}}}"


def _nested(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + "1" + close * depth


@pytest.mark.parametrize("depth", [sys.getrecursionlimit() + 10, 5_000, 60_000])
@pytest.mark.parametrize(("open_", "close"), [("[", "]"), ('{"a":', "}")])
def test_a_reply_deeper_than_the_recursion_limit_is_refused(
    depth: int, open_: str, close: str
) -> None:
    parsed = parse_step(_call_with(_nested(depth, open_, close)), StepOutput)
    assert parsed.value is None
    assert parsed.error is not None and f"nests more than {MAX_REPLY_DEPTH} levels" in parsed.error


def test_an_unclosed_deep_reply_is_refused_too() -> None:
    parsed = parse_step("{" + '"a": [' * 50_000, StepOutput)
    assert parsed.value is None and parsed.error is not None and "nests more than" in parsed.error


@pytest.mark.parametrize("depth", [200, 230, 260])
def test_deep_tool_arguments_are_refused_not_saved(depth: int) -> None:
    parsed = parse_step(_call_with(_nested(depth)), StepOutput)
    assert parsed.value is None and parsed.error is not None and "nests more than" in parsed.error


def test_tool_arguments_have_their_own_depth_bound() -> None:
    # the arguments object is level 1, so "x" may hold MAX_ARGUMENT_DEPTH - 1 levels
    ok = parse_step(_call_with(_nested(MAX_ARGUMENT_DEPTH - 1)), StepOutput)
    assert ok.value is not None
    deep = parse_step(_call_with(_nested(MAX_ARGUMENT_DEPTH)), StepOutput)
    assert deep.error == (
        f"action.arguments: nested more than {MAX_ARGUMENT_DEPTH} levels deep; "
        f"at most {MAX_ARGUMENT_DEPTH}"
    )


def test_accepted_arguments_survive_a_draft_round_trip() -> None:
    parsed = parse_step(_call_with(_nested(MAX_ARGUMENT_DEPTH - 1, '{"k":', "}")), StepOutput)
    assert parsed.value is not None
    active = ActiveState(
        namespace="ns", request_id="r1", seq=1, text="t", pending_call=parsed.value.action
    )
    back = ActiveState.model_validate_json(active.model_dump_json())
    assert back.pending_call == parsed.value.action


def test_large_tool_arguments_are_refused() -> None:
    parsed = parse_step(_call_with(json.dumps("y" * MAX_ARGUMENT_CHARS)), StepOutput)
    assert parsed.error is not None
    assert parsed.error.startswith("action.arguments: ")
    assert parsed.error.endswith(f"characters as JSON; at most {MAX_ARGUMENT_CHARS:,}")


def test_an_oversized_reply_is_refused_before_parsing() -> None:
    text = '{"action": {"type": "final", "answer": "' + "a" * MAX_REPLY_CHARS + '"}}'
    parsed = parse_step(text, StepOutput)
    assert parsed.error == (
        f"the reply has {len(text):,} characters; at most {MAX_REPLY_CHARS:,}: be shorter"
    )


def test_a_huge_unknown_key_is_named_not_repeated() -> None:
    key = "k" * 400_000  # a 1 MB one is refused for its size
    parsed = parse_step(json.dumps({key: 1, "action": None}), StepOutput)
    assert parsed.value is None and parsed.error is not None
    assert len(parsed.error) < 200 and "(400,000 characters): unknown field" in parsed.error
