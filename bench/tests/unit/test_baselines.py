"""The shared memories (embedding, ReasoningBank, Mem0-style) and the local embedding: every
write and read path goes through litellm, counted at the scripted chat provider and at the
local embedding provider; each memory keeps and recalls what its design says it does."""

from __future__ import annotations

import itertools
import math

import pytest

from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate_bench import embedding as emb
from flowstate_bench.baselines import (
    EXTRACT_SYSTEM,
    FACTS_SYSTEM,
    JUDGE_SYSTEM,
    RB_MAX_ITEMS,
    UPDATE_SYSTEM,
    EmbeddingMemory,
    Mem0Style,
    ReasoningBank,
    make_memory,
)
from flowstate_bench.embedding import LOCAL_MODEL, Embedder, cosine, hash_vector
from flowstate_bench.memory_models import memory_client, memory_policy

_names = itertools.count()


@pytest.fixture
def memory_model():
    model = ScriptedModel.policy(f"baselines-unit-{next(_names)}", memory_policy)
    yield model
    unregister(model.name)


def _systems(model: ScriptedModel) -> list[str]:
    systems = [JUDGE_SYSTEM, EXTRACT_SYSTEM, FACTS_SYSTEM, UPDATE_SYSTEM]
    names = ["judge", "extract", "facts", "update"]
    return [
        next(n for n, s in zip(names, systems, strict=True) if s == c.messages[0]["content"])
        for c in model.calls
    ]


def test_the_local_embedding_answers_litellm_embedding_deterministically() -> None:
    from flowstate.llm._litellm import litellm

    emb.install()
    before = emb.CALLS["hash-64"]
    response = litellm.embedding(model=f"{emb.PROVIDER}/hash-64", input=["ab cd", "ab cd", ""])
    vectors = [d["embedding"] for d in response.data]
    assert emb.CALLS["hash-64"] == before + 1  # one litellm call for the whole batch
    assert len(vectors[0]) == 64 and vectors[0] == vectors[1]
    assert math.isclose(sum(v * v for v in vectors[0]), 1.0)
    assert response.usage.prompt_tokens > 0
    near = cosine(hash_vector("wall mount compact"), hash_vector("a compact wall mount"))
    far = cosine(hash_vector("wall mount compact"), hash_vector("partition function"))
    assert near > 0.5 and abs(far) < 0.3


def test_the_embedder_counts_its_own_calls_and_tokens() -> None:
    embedder = Embedder(LOCAL_MODEL)
    before = emb.CALLS["hash-256"]
    embedder.embed(["one text", "another text"])
    embedder.one("a third")
    assert embedder.usage.calls == 2 == emb.CALLS["hash-256"] - before
    assert embedder.usage.prompt_tokens > 0 and embedder.embed([]) == []


def test_embedding_memory_one_call_per_write_and_per_read_top_k_by_cosine() -> None:
    memory = EmbeddingMemory(Embedder(), top_k=2)
    for chunk in ("bought the compact soundbar", "bought a 75 inch tv", "paid by card"):
        memory.add(chunk)
    assert memory.embedding_usage.calls == 3 and memory.usage.calls == 0
    context = memory.context("which soundbar is compact")
    assert memory.embedding_usage.calls == 4
    assert context.startswith("<memory>bought the compact soundbar</memory>")
    assert context.count("<memory>") <= 2
    assert EmbeddingMemory(Embedder()).context("anything") == ""  # nothing stored: no call


def test_reasoningbank_judges_extracts_embeds_then_returns_the_top_records(memory_model) -> None:
    bank = ReasoningBank(memory_client(memory_model.model), Embedder())
    bank.add("Step 1: search[tv]\nPurchase #1: B0FX000101 ($499)\nDone: True")
    bank.add("Step 1: click[x]\nTOOL RESULT x [error]: unknown tool 'x'")
    assert _systems(memory_model) == ["judge", "extract"] * 2  # two LLM calls per write
    assert bank.usage.calls == 4 == bank.extra_calls and bank.embedding_usage.calls == 2
    assert [r["label"] for r in bank.records] == ["success", "failure"]
    assert all(len(r["memory_items"]) <= RB_MAX_ITEMS for r in bank.records)
    context = bank.context("buy a cable for the tv")
    assert bank.embedding_usage.calls == 3  # the read embeds the query, no LLM call
    assert "B0FX000101" in context and context.count("<memory>") == 2


def test_mem0_style_extracts_facts_and_adds_updates_or_skips_them(memory_model) -> None:
    mem0 = Mem0Style(memory_client(memory_model.model), Embedder())
    mem0.add("Budget: 200 dollars\nSoundbar: B0FX000201")
    assert _systems(memory_model) == ["facts", "update"]
    assert mem0.embedding_usage.calls == 1  # nothing to search yet; the new memories embedded
    mem0.add("Budget: 250 dollars\nSoundbar: B0FX000201\nhello there")
    assert _systems(memory_model) == ["facts", "update"] * 2
    assert mem0.embedding_usage.calls == 3  # the facts searched, the update embedded
    assert mem0.events == ["ADD", "ADD", "UPDATE", "NONE"]
    assert sorted(mem0.memories.values()) == ["Budget: 250 dollars", "Soundbar: B0FX000201"]
    context = mem0.context("What is the budget?")
    assert "Budget: 250 dollars" in context and "200" not in context
    assert mem0.embedding_usage.calls == 4 and mem0.usage.calls == 4


def test_a_hallucinated_id_changes_nothing(memory_model) -> None:
    mem0 = Mem0Style(memory_client(memory_model.model), Embedder())
    mem0.add("Budget: 200 dollars")
    from flowstate_bench.baselines import Event

    mem0._apply([Event(id="m99", text="x", event="UPDATE"), Event(id="m98", event="DELETE")])
    assert list(mem0.memories.values()) == ["Budget: 200 dollars"]


def test_make_memory_knows_the_shared_names(memory_model) -> None:
    client = memory_client(memory_model.model)
    names = [make_memory(n, client, Embedder()).name for n in ("embedding", "reasoningbank")]
    assert names == ["embedding", "reasoningbank"]
    with pytest.raises(ValueError, match="no shared memory"):
        make_memory("letta", client, Embedder())
