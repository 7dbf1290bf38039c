"""Tolerant parsing of model replies into StepOutput, and the error lines sent back."""

from __future__ import annotations

import doctest

import pytest

import flowstate.llm.parsing
from flowstate.llm.parsing import extract_json, parse_step
from flowstate.models import AddOp, FinalAnswer, StepOutput, ToolCall

FINAL = '{"action": {"type": "final", "answer": "4"}}'


def _ok(text: str) -> StepOutput:
    result = parse_step(text, StepOutput)
    assert result.error is None, result.error
    assert result.ok and result.value is not None
    return result.value


def _error(text: str) -> str:
    result = parse_step(text, StepOutput)
    assert not result.ok and result.value is None
    assert result.error is not None
    return result.error


def test_bare_object() -> None:
    assert _ok(FINAL).action == FinalAnswer(type="final", answer="4")


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n{FINAL}\n```",
        f"```JSON\n{FINAL}```",
        f"```\n{FINAL}\n```",
        f"Here is my step:\n\n```json\n{FINAL}\n```\nLet me know if you need more.",
        f"```json\nThe step follows.\n{FINAL}\n```",
    ],
)
def test_fenced_json(text: str) -> None:
    assert _ok(text).action == FinalAnswer(type="final", answer="4")


def test_fence_in_another_language_is_skipped() -> None:
    text = f"```python\nprint({{'a': 1}})\n```\nand the step:\n```json\n{FINAL}\n```"
    assert _ok(text).action == FinalAnswer(type="final", answer="4")


def test_backticks_inside_a_fenced_string_do_not_cut_the_object() -> None:
    text = '```json\n{"action": {"type": "final", "answer": "run ```ls``` first"}}\n```'
    assert _ok(text).action == FinalAnswer(type="final", answer="run ```ls``` first")


@pytest.mark.parametrize(
    "text",
    [
        f"Sure! {FINAL}",
        f"{FINAL}\n\nI answered because 2+2=4.",
        f"Thinking... the step is {FINAL} -- done. {{not json}}",
        f"I will fill in {{placeholder}} later; the step: {FINAL}",
    ],
)
def test_prose_wrapped_json(text: str) -> None:
    assert _ok(text).action == FinalAnswer(type="final", answer="4")


def test_braces_and_quotes_inside_strings() -> None:
    text = (
        'ok {"action": {"type": "tool", "name": "search", '
        '"arguments": {"q": "a } b { \\"c\\""}}} trailing'
    )
    assert _ok(text).action == ToolCall(type="tool", name="search", arguments={"q": 'a } b { "c"'})


def test_raw_newlines_inside_strings_are_tolerated() -> None:
    value = _ok('{"action": {"type": "final", "answer": "line one\nline two"}}')
    assert value.action == FinalAnswer(type="final", answer="line one\nline two")


def test_full_step_round_trips() -> None:
    text = (
        '{"delta": [{"op": "add", "key": "hotel_budget", "category": "constraint", '
        '"summary": "at most 150 EUR a night", "content": "User said: max 150/night.", '
        '"relations": [{"type": "REFINES", "target": "r1.budget"}]}], '
        '"access": ["r1.budget"], "action": {"type": "tool", "name": "search_hotels", '
        '"arguments": {"city": "Lisbon", "max_price": 150}, "cites": ["r1.budget"]}}'
    )
    value = _ok(text)
    assert isinstance(value.delta[0], AddOp)
    assert value.delta[0].relations[0].target == "r1.budget"
    assert value.access == ["r1.budget"]
    assert isinstance(value.action, ToolCall) and value.action.arguments["max_price"] == 150


# --- malformed JSON -----------------------------------------------------------------------


def test_malformed_json_reports_position_in_the_reply() -> None:
    text = 'Step: {"action": {"type": "final" "answer": "4"}}'
    assert _error(text) == (
        'not valid JSON at char 34: expecting \',\' delimiter near \'e": "final" "answer": "4\''
    )
    assert text[34:42] == '"answer"'  # the position is in the reply as the model wrote it


@pytest.mark.parametrize(
    "text",
    [
        'ok {"action": {"type": "final", "answer": "4"',
        'ok {"action": {"type": "final", "answer": "4"}',
        'ok {"action": {"type": "final", "answer": "4}}',
    ],
)
def test_unclosed_object(text: str) -> None:
    assert _error(text) == "not valid JSON: the object starting at char 3 is never closed"


def test_single_quotes_are_not_json() -> None:
    assert _error("{'action': None}") == (
        "not valid JSON at char 1: expecting property name enclosed in double quotes"
        " near \"{'action': No\""
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty reply: expected one JSON object"),
        ("   \n", "empty reply: expected one JSON object"),
        ("I think the answer is 4.", "no JSON object found: reply with one JSON object"),
        ("[1, 2, 3]", "no JSON object found: reply with one JSON object"),
    ],
)
def test_no_object(text: str, message: str) -> None:
    assert _error(text) == message


def test_extract_json_raises_value_error() -> None:
    with pytest.raises(ValueError, match="no JSON object found"):
        extract_json("nothing")
    assert extract_json(f"x {FINAL} y") == {"action": {"type": "final", "answer": "4"}}


# --- schema violations --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"action": {"type": "done", "answer": "4"}}',
            "action.type: must be 'tool' or 'final', got 'done'",
        ),
        ('{"action": {"answer": "4"}}', "action.type: field required"),
        (
            '{"delta": [{"op": "delete", "key": "x"}]}',
            "delta[0].op: must be 'add', 'update' or 'remove', got 'delete'",
        ),
        (
            '{"delta": [{"op": "add", "key": "k", "category": "mood", "summary": "s"}]}',
            "delta[0].category: must be 'preference', 'constraint', 'environment', 'decision'"
            " or 'artifact', got 'mood'; delta[0].content: field required",
        ),
        ('{"acton": {"type": "final", "answer": "4"}}', "acton: unknown field"),
        (
            '{"action": {"type": "final", "answer": 4}}',
            "action.answer: must be a valid string, got 4",
        ),
        ('{"access": "r1.x"}', "access: must be a valid list, got 'r1.x'"),
        ('{"delta": {"op": "add"}}', "delta: must be a valid list"),
        (
            '{"delta": [{"op": "add", "key": "k", "category": "decision", "summary": "s", '
            '"content": "c", "relations": [{"type": "LIKES", "target": "r1.x"}]}]}',
            "delta[0].relations[0].type: must be 'DERIVED_FROM', 'DEPENDS_ON', 'REFINES',"
            " 'SUPERSEDES' or 'CONTRADICTS', got 'LIKES'",
        ),
        (
            '{"action": {"type": "tool", "name": "search", "arguments": []}}',
            "action.arguments: must be a valid dictionary",
        ),
    ],
)
def test_schema_violations(text: str, message: str) -> None:
    assert _error(text) == message


def test_many_errors_are_capped() -> None:
    ops = ", ".join('{"op": "remove"}' for _ in range(8))
    message = _error(f'{{"delta": [{ops}]}}')
    assert message == (
        "delta[0].key: field required; delta[1].key: field required; "
        "delta[2].key: field required; delta[3].key: field required; "
        "delta[4].key: field required; and 3 more"
    )


def test_module_doctests() -> None:
    result = doctest.testmod(flowstate.llm.parsing)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"delta": [], "delta": [{"op": "remove", "key": "a"}]}', "the key 'delta' is written "
         "twice in one object"),
        ('{"action": {"type": "tool", "name": "t", "arguments": {"a": 1, "a": 2}}}',
         "the key 'a' is written twice"),
        ('{"access": ["r1"]}\n{"delta": [{"op": "remove", "key": "a"}]}',
         "the reply has two JSON step objects (at chars 0 and 19): send one"),
        ('```json\n{"access": ["r1"]}\n```\n```json\n{"action": null}\n```',
         "the reply has two JSON step objects"),
    ],
)  # fmt: skip
def test_nothing_of_a_json_reply_is_dropped(text: str, error: str) -> None:
    parsed = parse_step(text, StepOutput)
    assert parsed.value is None and parsed.error is not None and error in parsed.error
