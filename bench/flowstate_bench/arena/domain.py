"""What the runner needs from each MemoryArena config: a `TaskEnv` per task that builds the
subtask prompts, owns the environment's tools, writes the official memory chunks, scores the
answers, and tells the scripted oracle what the gold path is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from flowstate.engine.tools import Tool
from flowstate.models.records import Usage
from flowstate_bench.arena.data import ArenaTask, Fact

Call = dict[str, Any]  # {"name": tool, "arguments": {...}}


@dataclass(frozen=True)
class Scored:
    """A task's subtask outcomes: pass/fail, a graded score in [0, 1], and travel's sPS."""

    passed: list[bool]
    graded: list[float]
    sps: float | None = None


class TaskEnv(Protocol):
    task: ArenaTask
    usage: Usage  # model calls made from inside the tools (formal's `reasoning`)

    def tools(self) -> list[Tool]: ...

    def base_chunks(self) -> list[str]:
        """Written to every memory before subtask 1."""
        ...

    def base_request(self) -> str | None:
        """What FlowState is told before subtask 1 (its memory is its own states)."""
        ...

    def prompt(self, k: int) -> str:
        """Subtask k's prompt (1-based); opens its session."""
        ...

    def chunks(self, k: int, answer: str) -> list[str]:
        """The official memory write after subtask k's session."""
        ...

    def gold_chunks(self, j: int) -> list[str]:
        """Subtask j's chunks as the official writer would write them had the agent produced
        the gold result (the recall replay)."""
        ...

    def note(self, k: int, answer: str) -> str:
        """What the scripted oracle records of subtask k in FlowState."""
        ...

    def outcome(self, k: int, answer: str) -> str:
        """What is scored of subtask k: the answer, or (shopping) the purchase made."""
        ...

    def score(self, outcomes: list[str]) -> Scored: ...

    def gold_fact(self, j: int) -> str:
        """The fact of subtask j's gold result a later subtask needs (j = 0: the base)."""
        ...

    def next_call(self, k: int, good: bool, text: str, done: int) -> Call | None:
        """The oracle's next tool call on the gold (good) or the forgetful path."""
        ...

    def final(self, k: int, good: bool, text: str) -> str: ...


def needed_facts(env: TaskEnv, k: int) -> list[Fact]:
    """Subtask k's facts: from the answer key, or else every earlier gold result (travel's
    base person included)."""
    if env.task.facts is not None:
        return env.task.facts.get(k, [])
    first = 0 if env.base_request() is not None else 1
    return [Fact(j, env.gold_fact(j)) for j in range(first, k)]
