"""The whole bill: what an agent counts for a call equals an independent count of exactly
what reached litellm (the messages, the reply schema, tool definitions), in every reply
format, through both shells, and the parts of each call add up to it."""

from __future__ import annotations

import json
from typing import Any

import pytest
import tiktoken

from flowstate.engine.prompt_costs import call_parts
from flowstate.engine.protocol import ReplyFormat
from flowstate.engine.transcript import Transcript
from flowstate.llm._litellm import litellm
from flowstate.store import Store
from flowstate.tokens import encoder
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


def independent_count(kwargs: dict[str, Any]) -> int:
    """OpenAI's chat accounting, written out here rather than taken from the library: 3
    tokens per message plus its role and content, 3 to prime the reply, and what else was
    sent (the schema, tool definitions) as compact JSON."""
    enc: tiktoken.Encoding = encoder(None)
    total = 3
    for message in kwargs["messages"]:
        total += 3 + len(enc.encode_ordinary(message["role"]))
        total += len(enc.encode_ordinary(message["content"]))
    for extra in ("response_format", "tools"):
        if kwargs.get(extra):
            text = json.dumps(kwargs[extra], ensure_ascii=False, separators=(",", ":"))
            total += len(enc.encode_ordinary(text))
    return total


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
    monkeypatch: pytest.MonkeyPatch,
    reply: ReplyFormat,
    structured: bool,
    schema_sent: bool,
) -> None:
    reached: list[dict[str, Any]] = []
    real, areal = litellm.completion, litellm.acompletion

    def completion(**kwargs: Any) -> Any:
        reached.append(kwargs)
        return real(**kwargs)

    async def acompletion(**kwargs: Any) -> Any:
        reached.append(kwargs)
        return await areal(**kwargs)

    monkeypatch.setattr(litellm, "completion", completion)
    monkeypatch.setattr(litellm, "acompletion", acompletion)
    harness = Harness(store, namespace, shell)
    agent, model = harness.agent(STEPS, [lookup], reply_format=reply)
    if not structured:
        agent.model._structured = False  # a provider without structured output
    agent.on_call = transcript = Transcript()
    result = agent.run("Find us a hotel in Lisbon")

    assert result.outcome.value == "answered" and len(reached) == 3
    expected = [independent_count(kw) for kw in reached]
    assert [c.prompt_tokens for c in result.calls] == expected  # the provider's figure
    assert [c.estimated_prompt_tokens for c in result.calls] == expected  # and the estimate
    assert result.usage.prompt_tokens == sum(expected)
    assert all(("response_format" in kw) is schema_sent for kw in reached)
    if reply is ReplyFormat.JSON and not structured:
        assert all("JSON schema" in kw["messages"][0]["content"] for kw in reached)
    for call, counted in zip(transcript.calls, expected, strict=True):
        parts = call_parts(call.prompt, call.sent)
        assert sum(parts.values()) == counted
        assert (parts["reply_format"] > 300) is (reply is ReplyFormat.JSON)
    # The scripted model answered in the format its prompt asked for.
    replies = [c.reply for c in model.calls]
    assert replies[0] is not None
    assert replies[0].startswith("TOOL lookup" if reply is ReplyFormat.LINES else "{")
