"""Memory systems compared with FlowState, written once against the seam's `MemoryStrategy`
(`add(chunk)`, `context(query)`) and run by both harnesses: MemoryArena feeds them its
official chunks, τ-bench one transcript per finished turn.

- `EmbeddingMemory` (`embedding`): MemoryArena's `text-embedding-3-small` baseline: each chunk
  cut into pieces of at most 2,048 tokens, one embedding call per chunk; at read time one
  embedding call for the query and the top k pieces by cosine (score > 0).
- `ReasoningBank` (`reasoningbank`): per chunk, one LLM call judges the trajectory
  (success/failure), one extracts at most 3 memory items (title, description, content), and
  the first 4,096 characters of the chunk are embedded as the record's key; at read time the
  query is embedded with an instruction prefix and the top 5 records are returned as plain
  text (title / description / content lines, as ReasoningBank's prompt shows items).
- `Mem0Style` (`mem0-style`): the Mem0 paper's algorithm (arXiv 2504.19413): per chunk, one LLM
  call extracts facts, the facts are embedded and matched against the most similar stored
  memories, and one LLM call decides ADD / UPDATE / DELETE / NONE for each; at read time one
  embedding call and a vector search.

Every LLM call goes through the `ModelClient` given (litellm), every embedding through the
`Embedder` (litellm); `usage` counts the former, `embedding_usage` the latter, both apart from
the task agent's.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from flowstate.llm.client import LiteLLMClient, ModelClient
from flowstate.models.records import Usage
from flowstate.tokens import encoder
from flowstate_bench.embedding import Embedder, Vector, cosine

PIECE_TOKENS = 2_048
EMBEDDING_TOP_K = 3
RB_TOP_K = 5
RB_KEY_CHARS = 4_096
RB_MAX_ITEMS = 3
# MemoryArena's ReasoningBank samples its judge at 0 and its extractor at 0.7 (not sent to
# gpt-5 models, which take only their default, as MemoryArena does not send it either).
RB_JUDGE_TEMPERATURE = 0.0
RB_EXTRACT_TEMPERATURE = 0.7
RB_QUERY_PREFIX = "Instruct: Given a task, retrieve the most relevant past experience.\nQuery: "
MEM0_SIMILAR = 10
MEM0_TOP_K = 10

JUDGE_SYSTEM = (
    "You judge an agent's trajectory. Read what the agent was asked, what it did and what the "
    "environment answered, and decide whether it accomplished the request. Reply with JSON: "
    '{"success": true|false, "reason": "<one sentence>"}.'
)
EXTRACT_SYSTEM = (
    "You distil reusable memory from an agent's trajectory. Extract at most 3 memory items that "
    "would help with later, related tasks: results and constraints a later step may depend on, "
    "and strategies that worked (or, for a failed trajectory, what to avoid). Reply with JSON: "
    '{"items": [{"title": "...", "description": "...", "content": "..."}]}.'
)
FACTS_SYSTEM = (
    "You extract facts worth remembering from a conversation with an agent: results, choices, "
    "identifiers, amounts, preferences and plans, each as one short self-contained sentence, "
    'exactly as written. Reply with JSON: {"facts": ["...", ...]} (an empty list if none).'
)
UPDATE_SYSTEM = (
    "You manage a memory store. For every new fact decide, against the existing memories "
    "(given with ids), one event: ADD (new information), UPDATE (an existing memory about the "
    "same thing; give its id and the merged text), DELETE (a memory the fact contradicts; give "
    "its id) or NONE (already known). Reply with JSON: "
    '{"memory": [{"id": "<id or new>", "text": "...", "event": "ADD|UPDATE|DELETE|NONE"}]}.'
)


def pieces(chunk: str, size: int = PIECE_TOKENS) -> list[str]:
    """The chunk cut into decoded slices of at most `size` tokens."""
    tokens = encoder().encode(chunk, disallowed_special=())
    if len(tokens) <= size:
        return [chunk]
    return [encoder().decode(tokens[i : i + size]) for i in range(0, len(tokens), size)]


class _Spending:
    """What every memory here keeps: its LLM usage and calls, and its embedder's."""

    def __init__(self, client: ModelClient | None, embedder: Embedder) -> None:
        self.usage, self.extra_calls = Usage(), 0
        self.client, self.embedder = client, embedder

    @property
    def embedding_usage(self) -> Usage:
        return self.embedder.usage

    def _call(
        self, system: str, text: str, schema: type[BaseModel], client: ModelClient | None = None
    ) -> Any:
        """One memory-side LLM call; the parsed value, or None when the reply did not parse."""
        client = client or self.client
        assert client is not None
        done = client.complete(
            [{"role": "system", "content": system}, {"role": "user", "content": text}], schema
        )
        self.usage += done.usage
        self.extra_calls += 1
        return done.value


class EmbeddingMemory(_Spending):
    name = "embedding"

    def __init__(self, embedder: Embedder, top_k: int = EMBEDDING_TOP_K) -> None:
        super().__init__(None, embedder)
        self.top_k = top_k
        self.docs: list[str] = []
        self.vectors: list[Vector] = []

    def add(self, chunk: str) -> None:
        new = pieces(chunk)
        self.vectors += self.embedder.embed(new)
        self.docs += new

    def ranked(self, query: str) -> list[tuple[float, int]]:
        """(score, index) of every piece, best first; ties keep insertion order."""
        if not self.docs:
            return []
        q = self.embedder.one(query)
        scores = [cosine(q, v) for v in self.vectors]
        return sorted(((s, i) for i, s in enumerate(scores)), key=lambda p: -p[0])

    def context(self, query: str) -> str:
        best = [i for s, i in self.ranked(query)[: self.top_k] if s > 0]
        return "\n".join(f"<memory>{self.docs[i]}</memory>" for i in best)


class Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    success: bool
    reason: str = ""


class Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    title: str
    description: str = ""
    content: str


class Items(BaseModel):
    model_config = ConfigDict(extra="ignore")

    items: list[Item] = Field(default_factory=list)


def at_temperature(client: ModelClient, temperature: float) -> ModelClient:
    """The client sampling at `temperature`, for a real litellm model; a scripted model (whose
    replies do not sample), a gpt-5 model or any other client is returned as it is."""
    if not isinstance(client, LiteLLMClient) or client.model.startswith("flowstate-scripted/"):
        return client
    if "gpt-5" in client.model:
        return client
    kwargs = {**client.litellm_kwargs, "temperature": temperature}
    return LiteLLMClient(
        client.model, retries=client.retries, retry_backoff_s=client.retry_backoff_s, **kwargs
    )


class ReasoningBank(_Spending):
    name = "reasoningbank"

    def __init__(self, client: ModelClient, embedder: Embedder, top_k: int = RB_TOP_K) -> None:
        super().__init__(client, embedder)
        self.judge = at_temperature(client, RB_JUDGE_TEMPERATURE)
        self.extractor = at_temperature(client, RB_EXTRACT_TEMPERATURE)
        self.top_k = top_k
        self.records: list[dict[str, Any]] = []
        self.keys: list[Vector] = []

    def add(self, chunk: str) -> None:
        verdict = self._call(JUDGE_SYSTEM, f"# Trajectory\n{chunk}", Verdict, self.judge)
        success = bool(verdict.success) if verdict is not None else False
        label = "success" if success else "failure"
        prompt = f"# Outcome: {label}\n\n# Trajectory\n{chunk}"
        items = self._call(EXTRACT_SYSTEM, prompt, Items, self.extractor)
        kept = [i.model_dump() for i in (items.items if items else [])][:RB_MAX_ITEMS]
        if not kept:
            return
        self.keys.append(self.embedder.one(chunk[:RB_KEY_CHARS]))
        self.records.append({"label": label, "memory_items": kept})

    def context(self, query: str) -> str:
        if not self.records:
            return ""
        q = self.embedder.one(RB_QUERY_PREFIX + query)
        scores = [100 * cosine(q, k) for k in self.keys]
        best = sorted(range(len(scores)), key=lambda i: -scores[i])[: self.top_k]
        # The tags on lines of their own: each item line reads as it was written.
        return "\n".join(f"<memory>\n{render_record(self.records[i])}\n</memory>" for i in best)


def render_record(record: dict[str, Any]) -> str:
    """A record as ReasoningBank's prompt shows memory items: plain title / description /
    content lines, so the reader (a model, or the scripted oracle) sees the text unescaped."""
    lines = [f"Outcome: {record['label']}"]
    for n, item in enumerate(record["memory_items"], 1):
        lines += [
            f"Memory Item {n}",
            f"# Title: {item['title']}",
            f"# Description: {item['description']}",
            f"# Content: {item['content']}",
        ]
    return "\n".join(lines)


class Facts(BaseModel):
    model_config = ConfigDict(extra="ignore")

    facts: list[str] = Field(default_factory=list)


class Event(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = "new"
    text: str = ""
    event: Literal["ADD", "UPDATE", "DELETE", "NONE"]


class Events(BaseModel):
    model_config = ConfigDict(extra="ignore")

    memory: list[Event] = Field(default_factory=list)


class Mem0Style(_Spending):
    """Memories are `{id: text}` with a vector each; ids shown to the update model are the
    store's own short ids, so a hallucinated id changes nothing."""

    name = "mem0-style"

    def __init__(self, client: ModelClient, embedder: Embedder, top_k: int = MEM0_TOP_K) -> None:
        super().__init__(client, embedder)
        self.top_k = top_k
        self.memories: dict[str, str] = {}
        self.vectors: dict[str, Vector] = {}
        self.events: list[str] = []  # every applied event, for tests and reports
        self._next = 0

    def add(self, chunk: str) -> None:
        # MemoryArena sends each chunk as a user message answered "thanks, noted".
        conversation = f"user: {chunk}\nassistant: thanks, noted"
        found = self._call(FACTS_SYSTEM, conversation, Facts)
        facts = [f.strip() for f in (found.facts if found else []) if f.strip()]
        if not facts:
            return
        similar: dict[str, str] = {}
        if self.memories:
            for vector in self.embedder.embed(facts):
                for mid in self._nearest(vector, MEM0_SIMILAR):
                    similar[mid] = self.memories[mid]
        old = [{"id": mid, "text": text} for mid, text in similar.items()]
        prompt = (
            f"# Existing memories\n{json.dumps(old, ensure_ascii=False)}\n\n"
            f"# New facts\n{json.dumps(facts, ensure_ascii=False)}"
        )
        decided = self._call(UPDATE_SYSTEM, prompt, Events)
        self._apply(decided.memory if decided else [Event(text=f, event="ADD") for f in facts])

    def _apply(self, events: list[Event]) -> None:
        writes: list[tuple[str, str]] = []
        for e in events:
            if e.event == "ADD" and e.text:
                self._next += 1
                writes.append((f"m{self._next}", e.text))
            elif e.event == "UPDATE" and e.id in self.memories and e.text:
                writes.append((e.id, e.text))
            elif e.event == "DELETE" and e.id in self.memories:
                del self.memories[e.id], self.vectors[e.id]
            elif e.event != "NONE":
                continue  # an unknown id or an empty text: nothing to apply
            self.events.append(e.event)
        if writes:
            for (mid, text), vector in zip(
                writes, self.embedder.embed([t for _, t in writes]), strict=True
            ):
                self.memories[mid], self.vectors[mid] = text, vector

    def _nearest(self, vector: Vector, n: int) -> list[str]:
        scored = sorted(self.vectors, key=lambda mid: -cosine(vector, self.vectors[mid]))
        return scored[:n]

    def context(self, query: str) -> str:
        if not self.memories:
            return ""
        best = self._nearest(self.embedder.one(query.lower()), self.top_k)
        return "\n".join(self.memories[mid] for mid in best)


def make_memory(
    name: str, client: ModelClient, embedder: Embedder, embedding_k: int = EMBEDDING_TOP_K
) -> EmbeddingMemory | ReasoningBank | Mem0Style:
    """One of the shared memories by its strategy name."""
    if name == "embedding":
        return EmbeddingMemory(embedder, top_k=embedding_k)
    if name == "reasoningbank":
        return ReasoningBank(client, embedder)
    if name == "mem0-style":
        return Mem0Style(client, embedder)
    raise ValueError(f"no shared memory named {name!r}")
