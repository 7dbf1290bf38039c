"""The whole bill: what an agent counts for a call equals an independent count of exactly
what reached litellm's provider (the messages, the reply schema, tool definitions), in every
reply format, through both shells, and the parts of each call add up to it. The count is
made apart from flowstate.tokens (tests/litellm_boundary.py)."""

from __future__ import annotations

import pytest

from flowstate.engine.prompt_costs import call_parts
from flowstate.engine.protocol import ReplyFormat
from flowstate.engine.transcript import Transcript
from flowstate.store import Store
from tests.litellm_boundary import prompt_tokens, recording, text_tokens
from tests.neo4j.engine_helpers import Harness, Shell, add, final, step, tool

pytestmark = pytest.mark.neo4j


def lookup(city: str) -> str:
    """Hotels of a city."""
    return f"[{{'name': 'Casa Azul', 'city': {city!r}}}]"


STEPS = [
    step(access=[], action=tool("lookup", city="Lisbon")),
    step([add("hotel", "decision", "Casa Azul", "Casa Azul, 120 EUR", evidence=["r1.o1"])]),
    step(action=final("Casa Azul", "Hotel chosen")),
]

# Scripted models are billed as a modern OpenAI model: o200k_base, as gpt-4o.
BILLED_AS = "gpt-4o"


@pytest.mark.parametrize(
    ("reply", "structured", "schema_sent"),
    [
        (ReplyFormat.LINES, True, False),  # the protocol describes the format: nothing else
        (ReplyFormat.JSON, True, True),  # the schema as response_format
        (ReplyFormat.JSON, False, False),  # the schema inside the system message
    ],
)
def test_counted_prompt_equals_what_reached_litellm(
    store: Store,
    namespace: str,
    shell: Shell,
    reply: ReplyFormat,
    structured: bool,
    schema_sent: bool,
) -> None:
    harness = Harness(store, namespace, shell)
    agent, model = harness.agent(STEPS, [lookup], reply_format=reply)
    if not structured:
        agent.model._structured = False  # a provider without structured output
    agent.on_call = transcript = Transcript()
    with recording() as provider:
        result = agent.run("Find us a hotel in Lisbon")
    reached = provider.received

    assert result.outcome.value == "answered" and len(reached) == 3
    expected = [prompt_tokens(call, BILLED_AS) for call in reached]
    assert [c.prompt_tokens for c in result.calls] == expected  # the provider's figure
    assert [c.estimated_prompt_tokens for c in result.calls] == expected  # and the estimate
    assert result.usage.prompt_tokens == sum(expected)
    replies = [c.reply for c in model.calls]
    assert all(isinstance(r, str) for r in replies)
    assert [c.completion_tokens for c in result.calls] == [
        text_tokens(str(r or ""), BILLED_AS) for r in replies
    ]
    assert all((call.response_format is not None) is schema_sent for call in reached)
    if reply is ReplyFormat.JSON and not structured:
        assert all("JSON schema" in call.messages[0]["content"] for call in reached)
    for call, counted in zip(transcript.calls, expected, strict=True):
        parts = call_parts(call.prompt, call.sent)
        assert sum(parts.values()) == counted
        assert (parts["reply_format"] > 300) is (reply is ReplyFormat.JSON)
    # The scripted model answered in the format its prompt asked for.
    assert replies[0] is not None
    assert str(replies[0]).startswith("TOOL lookup" if reply is ReplyFormat.LINES else "{")
