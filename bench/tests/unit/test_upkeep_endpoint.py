"""The upkeep bench's scripted endpoint, driven by the `openai` SDK as Mem0 and Graphiti drive it:
chat completions in JSON mode, `responses.parse` with a schema, embeddings in the SDK's default
base64 form. What it bills equals an independent count of the bytes that reached it, and what
it answers is what the SDK parses. No memory system needed."""

from __future__ import annotations

import json

import pytest
from openai import OpenAI
from pydantic import BaseModel

from flowstate_bench.embedding import hash_vector
from flowstate_bench.upkeep.endpoint import BILLED_AS, Endpoint, Received
from flowstate_bench.upkeep.scripts import key_of
from tests.litellm_boundary import Received as AtBoundary
from tests.litellm_boundary import prompt_tokens, text_tokens


class Fact(BaseModel):
    fact: str


def respond(call: Received) -> str:
    """A script of the test's own: echoes the last message's text in the asked shape."""
    said = str(call.messages[-1]["content"])
    return json.dumps({"fact": said} if call.schema_name == "Fact" else {"memory": [said]})


def independent(ep: Endpoint, label: str) -> tuple[int, int, int]:
    replies = iter(r.reply for r in ep.received if r.route != "embeddings")
    prompt = completion = embedded = 0
    for at, path, raw in ep.wire:
        if at != label:
            continue
        body = json.loads(raw)
        if path.endswith("/embeddings"):
            embedded += sum(text_tokens(t, BILLED_AS) for t in body["input"])
            continue
        if path.endswith("/responses"):
            messages, schema = body["input"], body["text"]["format"]
        else:
            messages, schema = body["messages"], body.get("response_format")
        at_boundary = AtBoundary(body["model"], messages, {"response_format": schema})
        prompt += prompt_tokens(at_boundary, BILLED_AS)
        completion += text_tokens(next(replies), BILLED_AS)
    return prompt, completion, embedded


def test_the_sdk_calls_are_answered_and_billed_as_they_arrived() -> None:
    with Endpoint(respond) as ep:
        client = OpenAI(api_key="scripted", base_url=ep.base_url, max_retries=0)
        ep.label = "w1"
        chat = client.chat.completions.create(
            model=BILLED_AS,
            messages=[
                {"role": "system", "content": "Extract memories as JSON."},
                {"role": "user", "content": "budget: Hotel budget 150 EUR/night"},
            ],
            response_format={"type": "json_object"},
        )
        parsed = client.responses.parse(
            model=BILLED_AS,
            input=[{"role": "user", "content": "trip: Lisbon, 12-15 June 2027"}],
            text_format=Fact,
        )
        vectors = client.embeddings.create(
            model="text-embedding-3-small", input=["Casa do Limoeiro", "Palácio Verde"]
        )
        ep.label = "w2"
        client.embeddings.create(model="text-embedding-3-small", input=["step-free"])

    assert json.loads(chat.choices[0].message.content or "") == {
        "memory": ["budget: Hotel budget 150 EUR/night"]
    }
    assert parsed.output_parsed == Fact(fact="trip: Lisbon, 12-15 June 2027")
    # The SDK asked for base64 and decoded it back to the scripted vectors.
    assert vectors.data[1].embedding == pytest.approx(hash_vector("Palácio Verde"), abs=1e-6)

    bill = ep.bill("w1")
    prompt, completion, embedded = independent(ep, "w1")
    assert (bill.prompt_tokens, bill.completion_tokens, bill.embedding_tokens) == (
        prompt,
        completion,
        embedded,
    )
    assert (bill.calls, bill.embedding_calls) == (2, 1)
    assert set(bill.by_schema) == {"json", "Fact"}
    # The SDK's own view of the usage is the bill's.
    assert chat.usage is not None and parsed.usage is not None
    assert chat.usage.prompt_tokens + parsed.usage.input_tokens == bill.prompt_tokens
    assert ep.bill("w2").embedding_tokens == text_tokens("step-free", BILLED_AS)
    assert ep.bill("w2").calls == 0


def test_a_call_the_script_cannot_answer_fails_and_is_kept_as_an_error() -> None:
    def refuse(call: Received) -> str:
        raise ValueError("no scripted reply")

    with Endpoint(refuse) as ep:
        client = OpenAI(api_key="scripted", base_url=ep.base_url, max_retries=0)
        with pytest.raises(Exception, match="no scripted reply"):
            client.chat.completions.create(
                model=BILLED_AS, messages=[{"role": "user", "content": "hi"}]
            )
    assert ep.errors == ["chat: ValueError: no scripted reply"]
    assert ep.received == []  # nothing answered, nothing billed


def test_a_fact_text_names_its_state_key() -> None:
    assert key_of('hotel options: 2 boutique hotels fit. [{"id": "H1"}]') == "hotel options"
