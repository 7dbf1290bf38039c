"""The shared memories (embedding, ReasoningBank, Mem0-style) and the local embedding: every
write and read path goes through litellm, counted at the scripted chat provider and at the
local embedding provider; each memory keeps and recalls what its design says it does."""

from __future__ import annotations

import itertools
import json
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
    from flowstate.llm import load_litellm

    litellm = load_litellm()

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
    assert near > 0.5 and 0 <= far < 0.3


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
    mem0.add("Budget: 200 dollars, 250 with a mount\nSoundbar: B0FX000201\nhello there")
    assert _systems(memory_model) == ["facts", "update"] * 2
    assert mem0.embedding_usage.calls == 3  # the facts searched, the update embedded
    assert mem0.events == ["ADD", "ADD", "UPDATE", "NONE"]
    assert sorted(mem0.memories.values()) == [
        "Budget: 200 dollars, 250 with a mount",
        "Soundbar: B0FX000201",
    ]
    context = mem0.context("What is the budget?")
    assert "250 with a mount" in context
    assert mem0.embedding_usage.calls == 4 and mem0.usage.calls == 4


def test_the_scripted_mem0_decider_never_overwrites_a_different_value(memory_model) -> None:
    """Two subtasks' `Purchase #1` lines share a key but not a subject: both are kept, whole."""
    mem0 = Mem0Style(memory_client(memory_model.model), Embedder())
    long_plan = "PLAN 3: " + ", ".join(f"day {d} at hotel {d * 7}" for d in range(1, 60))
    mem0.add("Purchase #1: B0FX000101 ($499)")
    mem0.add(f"Purchase #1: B0FX000777 ($25)\n{long_plan}")
    assert mem0.events == ["ADD", "ADD", "ADD"]
    assert "Purchase #1: B0FX000101 ($499)" in mem0.memories.values()
    assert long_plan in mem0.memories.values()  # longer than 400 characters, not cut


def test_mem0_style_applies_a_delete_from_the_update_model() -> None:
    """The DELETE path: the decider names a stored id, the memory and its vector go."""

    def policy(messages):
        text = messages[-1]["content"]
        if FACTS_SYSTEM in messages[0]["content"]:
            return {"facts": [text.split("\n")[0].removeprefix("user: ")]}
        stored = json.loads(text.split("\n\n# New facts\n")[0].split("\n", 1)[1])
        if not stored:
            return {"memory": [{"id": "new", "text": "Order #7: pending", "event": "ADD"}]}
        return {"memory": [{"id": stored[0]["id"], "event": "DELETE"}]}

    model = ScriptedModel.policy(f"baselines-delete-{next(_names)}", policy)
    try:
        mem0 = Mem0Style(memory_client(model.model), Embedder())
        mem0.add("Order #7: pending")
        assert list(mem0.memories.values()) == ["Order #7: pending"]
        mem0.add("Order #7 was cancelled")
        assert mem0.events == ["ADD", "DELETE"]
        assert mem0.memories == {} and mem0.vectors == {}
        assert mem0.context("order 7") == ""
    finally:
        unregister(model.name)


# A needle among distractors: the store's first records are distractors, so a memory that
# returns its first k instead of its k nearest loses the needle.
_DISTRACTORS = [f"Step {i}: looked at lamp model L{i:03d} in the lighting aisle" for i in range(30)]
_NEEDLE = "Purchase #1: espresso grinder B0GRIND42 with conical burrs"
_NEEDLE_QUERY = "which espresso grinder with conical burrs was bought"


def test_the_local_embedding_never_gives_a_negative_cosine() -> None:
    vectors = Embedder().embed([*_DISTRACTORS[:10], _NEEDLE, "partition function", "zz"])
    assert all(v >= 0 for vec in vectors for v in vec)
    assert min(cosine(a, b) for a in vectors for b in vectors) >= 0


def test_embedding_memory_finds_the_needle_and_ranks_by_cosine() -> None:
    memory = EmbeddingMemory(Embedder(), top_k=3)
    for chunk in _DISTRACTORS[:15] + [_NEEDLE] + _DISTRACTORS[15:]:
        memory.add(chunk)
    ranked = memory.ranked(_NEEDLE_QUERY)
    assert [s for s, _ in ranked] == sorted((s for s, _ in ranked), reverse=True)
    assert memory.docs[ranked[0][1]] == _NEEDLE
    assert memory.context(_NEEDLE_QUERY).startswith(f"<memory>{_NEEDLE}</memory>")


def test_reasoningbank_returns_the_nearest_records_not_the_first(memory_model) -> None:
    bank = ReasoningBank(memory_client(memory_model.model), Embedder())
    for chunk in _DISTRACTORS[:8] + [_NEEDLE] + _DISTRACTORS[8:12]:
        bank.add(chunk)
    context = bank.context(_NEEDLE_QUERY)
    first = context.split("</memory>")[0]
    assert "B0GRIND42" in first  # the nearest record comes first
    assert "# Content: Purchase #1: espresso grinder" in first  # plain text, not JSON
    assert '\\"' not in context and "{" not in context


def test_mem0_style_reads_the_most_similar_facts_not_the_first(memory_model) -> None:
    mem0 = Mem0Style(memory_client(memory_model.model), Embedder(), top_k=5)
    for chunk in _DISTRACTORS[:20] + [_NEEDLE]:
        mem0.add(chunk)
    assert _NEEDLE in mem0.memories.values() and len(mem0.memories) == 21
    assert mem0.context(_NEEDLE_QUERY).split("\n")[0] == _NEEDLE


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


def test_arena_zipact_bm25_retrieves_the_needle_from_the_raw_chunks() -> None:
    """The summary here keeps nothing, so the needle can only come from BM25."""
    from flowstate_bench.arena.memories import ZipActBM25

    model = ScriptedModel.policy(f"baselines-zip-{next(_names)}", lambda m: {"summary": ""})
    try:
        memory = ZipActBM25(memory_client(model.model))
        for chunk in _DISTRACTORS[:20] + [_NEEDLE] + _DISTRACTORS[20:]:
            memory.add(chunk)
        assert "B0GRIND42" in memory.context(_NEEDLE_QUERY)
        assert memory.extra_calls == 1  # one summary call, the BM25 read is model-free
    finally:
        unregister(model.name)


def test_a_misnamed_or_unknown_embedding_model_fails_in_one_line() -> None:
    from flowstate.errors import ModelError, UsageError

    with pytest.raises(UsageError, match="hash-<n>"):
        Embedder(f"{emb.PROVIDER}/hash-abc")
    with pytest.raises(ModelError, match="'no-such-embedding-model' refused the call"):
        Embedder("no-such-embedding-model").embed(["x"])


def test_reasoningbank_samples_its_judge_at_0_and_its_extractor_at_0_7(memory_model) -> None:
    from flowstate.llm.client import LiteLLMClient

    real = ReasoningBank(LiteLLMClient("gpt-4o-mini", temperature=1.0), Embedder())
    assert isinstance(real.judge, LiteLLMClient) and isinstance(real.extractor, LiteLLMClient)
    assert real.judge.litellm_kwargs["temperature"] == 0.0
    assert real.extractor.litellm_kwargs["temperature"] == 0.7
    scripted_client = memory_client(memory_model.model)
    scripted = ReasoningBank(scripted_client, Embedder())
    assert scripted.judge is scripted_client is scripted.extractor  # a script does not sample
