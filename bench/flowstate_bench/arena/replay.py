"""The recall replay: does a memory deliver the facts subtask k needs when every earlier
subtask ended with its gold result? For each k: a fresh memory, the base chunks, the gold
chunks of subtasks 1..k-1, then one `context(prompt_k)`; recall is the share of subtasks whose
facts are all in it. No agent and no model are involved, so only retrieval memories replay
(the rolling summary needs a model to write its summary)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flowstate_bench.arena.data import normalise
from flowstate_bench.arena.domain import TaskEnv, needed_facts
from flowstate_bench.seam import MemoryStrategy


def replay(env: TaskEnv, memory: Callable[[], MemoryStrategy]) -> list[bool | None]:
    """Per subtask k: were its facts all recalled (None when it needs none)."""
    found: list[bool | None] = []
    for k in range(1, len(env.task) + 1):
        facts = needed_facts(env, k)
        if not facts:
            found.append(None)
            continue
        mem = memory()
        for chunk in env.base_chunks():
            mem.add(chunk)
        for j in range(1, k):
            for chunk in env.gold_chunks(j):
                mem.add(chunk)
        context = normalise(mem.context(env.prompt(k)))
        found.append(all(normalise(f.text) in context for f in facts))
    return found


def recall_at_k(per_task: Sequence[Sequence[bool | None]]) -> list[float | None]:
    """Per depth k: the share of tasks (with facts at k) whose facts were recalled."""
    longest = max((len(t) for t in per_task), default=0)
    out: list[float | None] = []
    for k in range(longest):
        known = [t[k] for t in per_task if len(t) > k and t[k] is not None]
        out.append(sum(bool(f) for f in known) / len(known) if known else None)
    return out
