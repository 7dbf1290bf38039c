"""What json.loads accepts but a draft cannot keep is refused by the parser, with a message.

An escaped lone surrogate ("\\ud800") fits no UTF-8 text: left in, it broke the draft save of
the next step (PydanticSerializationError escaping Agent.run) or the commit. NaN and Infinity
are not JSON: the draft wrote them back as null, changing a parked tool call's arguments.
"""

from __future__ import annotations

import pytest

from flowstate.llm.parsing import parse_step
from flowstate.models import FinalAnswer, StepOutput

REFUSED = [
    ('{"access": ["r1.a", "\\ud800"]}', "access[1]"),
    ('{"action": {"type": "final", "answer": "x \\udfff"}}', "action.answer"),
    ('{"action": {"type": "tool", "name": "t", "arguments": {"q": ["\\ud800"]}}}',
     "action.arguments.q[0]"),
    ('{"\\udc00key": 1}', "\\udc00key"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "where"), REFUSED)
def test_lone_surrogates_are_refused_with_their_path(text: str, where: str) -> None:
    parsed = parse_step(text, StepOutput)
    assert parsed.value is None
    assert parsed.error == (
        f"{where}: text contains a lone surrogate (an unpaired \\ud800-\\udfff escape); "
        "send valid Unicode"
    )
    parsed.error.encode("utf-8")  # the message itself can be put in a prompt and a draft


def test_escaped_pairs_are_fine() -> None:
    parsed = parse_step('{"action": {"type": "final", "answer": "\\ud83d\\ude00"}}', StepOutput)
    assert parsed.value is not None and isinstance(parsed.value.action, FinalAnswer)
    assert parsed.value.action.answer == "\U0001f600"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused(token: str) -> None:
    text = '{"action": {"type": "tool", "name": "t", "arguments": {"x": TOKEN}}}'
    text = text.replace("TOKEN", token)
    parsed = parse_step(text, StepOutput)
    assert parsed.error == f"not valid JSON: {token} is not a JSON number; use a finite number"
