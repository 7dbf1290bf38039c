"""Per config: the environment of a task, the policy and step limit of a session, and the
baseline session itself (the tau-bench JSON tool loop with a memory in front)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from flowstate.errors import UsageError
from flowstate.llm.client import ModelClient
from flowstate_bench.arena import formal, shopping, travel
from flowstate_bench.arena.data import ArenaTask
from flowstate_bench.arena.domain import TaskEnv
from flowstate_bench.arena.memories import wrap
from flowstate_bench.arena.shopping_env import MAX_ROUNDS, ProductDB
from flowstate_bench.arena.shopping_score import Scoring
from flowstate_bench.arena.travel_env import TravelDB
from flowstate_bench.seam import MemoryStrategy, TurnResult
from flowstate_bench.tau.strategies import LoopStrategy

POLICIES = {
    "bundled_shopping": shopping.POLICY,
    "group_travel_planner": travel.POLICY,
    "formal_reasoning_math": formal.POLICY,
    "formal_reasoning_phys": formal.POLICY,
}
# Model calls per session: shopping's max_rounds, travel's max_steps, formal's three tool
# iterations plus the answer.
STEPS = {
    "bundled_shopping": MAX_ROUNDS,
    "group_travel_planner": 30,
    "formal_reasoning_math": 4,
    "formal_reasoning_phys": 4,
}


def policy_of(config: str) -> str:
    return POLICIES[config]


def steps_of(config: str) -> int:
    return STEPS[config]


class Resources:
    """The databases a run needs, opened once and only when a task needs them."""

    def __init__(
        self,
        product_db: Path | None,
        travel_db: Path | None,
        cache_dir: Path | None,
        judge: formal.Judge,
        scoring: Scoring = "code",
    ) -> None:
        self._product, self._travel, self.cache_dir = product_db, travel_db, cache_dir
        self.judge, self.scoring = judge, scoring

    @cached_property
    def products(self) -> ProductDB:
        if self._product is None:
            raise UsageError("bundled_shopping needs --product-db (or FLOWSTATE_PRODUCT_DB)")
        return ProductDB(self._product, self.cache_dir)

    @cached_property
    def travel(self) -> TravelDB:
        if self._travel is None:
            raise UsageError("group_travel_planner needs --travel-db (or FLOWSTATE_TRAVEL_DB)")
        return TravelDB(self._travel)


def make_env(task: ArenaTask, res: Resources, model: Callable[[], ModelClient]) -> TaskEnv:
    if task.config == "bundled_shopping":
        return shopping.ShoppingTask(task, res.products, res.scoring)
    if task.config == "group_travel_planner":
        return travel.TravelTask(task, res.travel)
    return formal.FormalTask(task, model, res.judge)


class MemoryLoop(LoopStrategy):
    """A baseline session: retrieval once at its start, the official chunks written after."""

    def __init__(self, env: TaskEnv, client: ModelClient, memory: MemoryStrategy) -> None:
        config = env.task.config
        super().__init__(client, env.tools(), policy_of(config), max_steps=steps_of(config))
        self.env, self.memory, self.name = env, memory, memory.name
        self.k = 0
        for chunk in env.base_chunks():
            memory.add(chunk)

    def respond(self, text: str) -> TurnResult:
        # Retrieval once, at the start of the session; the prompt is MemoryArena's wrap.
        self.k += 1
        return super().respond(wrap(self.memory.context(text), text))

    def context(self, text: str) -> list[dict[str, str]]:
        return []  # the memory is already in the wrapped prompt

    def remember(self, turn: list[dict[str, str]]) -> None:
        answer = next((m["content"] for m in reversed(turn) if m["role"] == "assistant"), "")
        for chunk in self.env.chunks(self.k, answer):
            self.memory.add(chunk)


def make_strategy(env: TaskEnv, client: ModelClient, memory: MemoryStrategy) -> MemoryLoop:
    return MemoryLoop(env, client, memory)
