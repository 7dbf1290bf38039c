"""The text memories compared with FlowState, each a `MemoryStrategy` fed byte-identical chunks.

- full: MemoryArena's `long_context`: every chunk, time-stamped, the last 120,000 tokens;
- bm25: MemoryArena's `bm25`: pieces of at most 2,048 tokens, BM25Okapi (k1 1.5, b 0.75,
  epsilon 0.25), the top 3 for the session's query;
- zipact (alias summary): a rolling summary (ZipAct-like), rewritten by one model call per
  subtask;
- zipact_bm25: the rolling summary plus MemoryArena's BM25 over the raw chunks;
- none: no memory at all (the negative control);
- plans: MemoryArena's own `none`, which for travel keeps the earlier queries and plans.

The memories with their own LLM or embedding calls (embedding, reasoningbank, mem0-style) are
shared with τ-bench and live in `flowstate_bench.baselines`. A memory that needs only the
agent's model is one class here and one line in `MEMORIES`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from flowstate.llm.client import ModelClient
from flowstate.models.records import Usage
from flowstate.tokens import encoder
from flowstate_bench.baselines import pieces
from flowstate_bench.seam import MemoryStrategy

LONG_CONTEXT_TOKENS = 120_000
BM25_TOP_K = 3
SUMMARY_CHARS = 20_000
SUMMARY_SYSTEM = (
    "You keep the memory of an agent that solves a task in several sessions. Rewrite the "
    "summary so that it keeps every result a later session may need (items bought and their "
    "attributes, plans chosen for each person, answers found), exactly as written. Be brief "
    "otherwise."
)


def wrap(context: str, query: str) -> str:
    """MemoryArena's prompt: the memory block, then the query."""
    return f"<memory_context>\n{context or 'None'}\n</memory_context>\nUser: {query}"


class NoMemory:
    name = "none"

    def __init__(self) -> None:
        self.usage, self.extra_calls = Usage(), 0

    def add(self, chunk: str) -> None:
        return None

    def context(self, query: str) -> str:
        return ""


class PlansOnly:
    """MemoryArena's own `none` setting: nothing for shopping and formal reasoning, but for
    travel the base person's and every earlier traveler's query and final plan."""

    name = "plans"

    def __init__(self) -> None:
        self.usage, self.extra_calls = Usage(), 0
        self.plans: list[str] = []

    def add(self, chunk: str) -> None:
        try:
            record = json.loads(chunk)
        except ValueError:
            return
        if isinstance(record, dict) and "final_plan" in record:
            self.plans.append(f"{record.get('query', '')}\n{record['final_plan']}")

    def context(self, query: str) -> str:
        return "\n\n".join(self.plans)


class LongContext:
    """Every chunk in order; only the last `max_tokens` tokens are kept."""

    name = "full"

    def __init__(
        self, max_tokens: int = LONG_CONTEXT_TOKENS, clock: Callable[[], datetime] | None = None
    ) -> None:
        self.usage, self.extra_calls = Usage(), 0
        self.max_tokens = max_tokens
        self.clock = clock or (lambda: datetime.now(UTC))
        self.buffer = ""

    def add(self, chunk: str) -> None:
        stamp = self.clock().strftime("%Y-%m-%d %H:%M:%S")
        self.buffer += f"[{stamp}] {chunk}\n"
        # A cheap bound first: a token is at least one character.
        if len(self.buffer) > self.max_tokens:
            tokens = encoder().encode(self.buffer, disallowed_special=())
            if len(tokens) > self.max_tokens:
                self.buffer = encoder().decode(tokens[-self.max_tokens :])

    def context(self, query: str) -> str:
        return self.buffer.rstrip("\n")


def bm25_words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


class BM25Memory:
    name = "bm25"

    def __init__(self, top_k: int = BM25_TOP_K) -> None:
        self.usage, self.extra_calls = Usage(), 0
        self.top_k = top_k
        self.docs: list[str] = []

    def add(self, chunk: str) -> None:
        self.docs += pieces(chunk)

    def context(self, query: str) -> str:
        if not self.docs:
            return ""
        from rank_bm25 import BM25Okapi

        index = BM25Okapi([bm25_words(d) for d in self.docs], k1=1.5, b=0.75, epsilon=0.25)
        scores = index.get_scores(bm25_words(query))
        # sorted() is stable: equal scores keep insertion order; negative scores are kept.
        best = sorted(range(len(self.docs)), key=lambda i: -scores[i])[: self.top_k]
        return "\n".join(f"<memory>{self.docs[i]}</memory>" for i in best)


class SummaryUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    summary: str


class RollingSummary:
    """Chunks wait until the next session starts; then one model call folds them into the
    summary, so a subtask costs one extra call whatever its number of chunks."""

    name = "zipact"

    def __init__(self, client: ModelClient) -> None:
        self.usage, self.extra_calls = Usage(), 0
        self.client = client
        self.summary = ""
        self.pending: list[str] = []

    def add(self, chunk: str) -> None:
        self.pending.append(chunk)

    def context(self, query: str) -> str:
        if self.pending:
            latest = "\n".join(self.pending)
            msgs = [
                {"role": "system", "content": SUMMARY_SYSTEM},
                {
                    "role": "user",
                    "content": f"# Summary so far\n{self.summary or '(none)'}\n\n"
                    f"# Latest session\n{latest}",
                },
            ]
            done = self.client.complete(msgs, SummaryUpdate)
            self.usage += done.usage
            self.extra_calls += 1
            self.pending = []
            if done.value is not None:
                self.summary = done.value.summary[:SUMMARY_CHARS]
        return self.summary


class ZipActBM25:
    """The rolling summary, then BM25's top pieces of the raw chunks."""

    name = "zipact_bm25"

    def __init__(self, client: ModelClient) -> None:
        self.summary, self.bm25 = RollingSummary(client), BM25Memory()

    @property
    def usage(self) -> Usage:
        return self.summary.usage

    @property
    def extra_calls(self) -> int:
        return self.summary.extra_calls

    def add(self, chunk: str) -> None:
        self.summary.add(chunk)
        self.bm25.add(chunk)

    def context(self, query: str) -> str:
        parts = [self.summary.context(query), self.bm25.context(query)]
        return "\n".join(p for p in parts if p)


MemoryFactory = Callable[[ModelClient], MemoryStrategy]
MEMORIES: dict[str, MemoryFactory] = {
    "full": lambda client: LongContext(),
    "bm25": lambda client: BM25Memory(),
    "zipact": RollingSummary,
    "zipact_bm25": ZipActBM25,
    "none": lambda client: NoMemory(),
    "plans": lambda client: PlansOnly(),
}
# The memories that work without a model, so the recall replay can run them.
MODEL_FREE = ("full", "bm25", "none", "plans")
