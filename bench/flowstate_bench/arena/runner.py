"""Runs MemoryArena: for each config, strategy, trial and task, the subtasks in order, each one
session; the memory persists across a task's sessions and starts empty per task.

A baseline session is the tau-bench JSON tool loop with the memory's context in front of the
subtask prompt; after it, the config's writer turns the session into chunks and the memory
`add`s them. FlowState gets a namespace per task: each subtask is one request.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from flowstate.api import FlowState
from flowstate.engine.agent import AgentConfig
from flowstate.engine.index import DEFAULT_BUDGET_TOKENS
from flowstate.errors import ModelError, RequestInterrupted, UsageError
from flowstate.llm.client import Completion, LiteLLMClient, ModelClient, TextFormat
from flowstate.models.records import Usage
from flowstate.store import Store
from flowstate_bench import strategy_names
from flowstate_bench.arena.data import CONFIGS, ArenaData, ArenaTask
from flowstate_bench.arena.domain import TaskEnv
from flowstate_bench.arena.formal import Judge
from flowstate_bench.arena.memories import MEMORIES, MODEL_FREE
from flowstate_bench.arena.oracle import ScriptedAgent
from flowstate_bench.arena.replay import replay
from flowstate_bench.arena.sessions import (
    Resources,
    make_env,
    make_strategy,
    policy_of,
    steps_of,
)
from flowstate_bench.arena.shopping_score import Scoring
from flowstate_bench.baselines import make_memory
from flowstate_bench.embedding import LOCAL_MODEL, Embedder
from flowstate_bench.harness import AgentKind, Harness, Journal, Unit, select
from flowstate_bench.seam import (
    FlowStateStrategy,
    MemoryStrategy,
    Strategy,
    TurnResult,
    add_parts,
    embedding_usage,
)
from flowstate_bench.strategy_names import ALIASES, FLOWSTATE_VARIANTS, SHARED_MEMORIES

STRATEGIES = strategy_names.ARENA
# The memories the recall replay can run: no LLM (an embedding model is not one).
REPLAYABLE = (*MODEL_FREE, "embedding")


T = TypeVar("T", bound=BaseModel)


class _NoModel:
    """The client of the recall replay, which must never call a model."""

    model = "none"

    def complete(
        self, messages: list[dict[str, Any]], schema: type[T] | TextFormat[T]
    ) -> Completion[T]:
        raise UsageError("the recall replay runs no model")

    async def acomplete(
        self, messages: list[dict[str, Any]], schema: type[T] | TextFormat[T]
    ) -> Completion[T]:
        raise UsageError("the recall replay runs no model")


NO_MODEL = _NoModel()


class RunConfig(BaseModel):
    """One MemoryArena run; the configs and the data folder are required."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    configs: list[str]
    strategies: list[str] = list(STRATEGIES)
    agent: AgentKind = "oracle"
    model: str | None = None
    judge_model: str | None = None
    trials: int = Field(1, ge=1)
    limit: int | None = Field(None, ge=1)
    task_ids: list[str] | None = None
    product_db: Path | None = None
    travel_db: Path | None = None
    cache_dir: Path | None = None
    index_budget_tokens: int = Field(DEFAULT_BUDGET_TOKENS, ge=50)
    prefetch_states: int = Field(AgentConfig().prefetch_states, ge=0, le=64)  # the library's
    recent_observations: int = Field(AgentConfig().recent_observations, ge=0)  # the library's
    # The scripted agents access and act in one step when the action does not need what
    # they open (the protocol's rule); False: they always wait a step for it.
    one_step: bool = True
    keep_memory: bool = False
    model_kwargs: dict[str, Any] = {}
    memory_model: str | None = None  # the memories' own LLM; see tau's RunConfig
    embedding_model: str = LOCAL_MODEL
    embedding_k: int = Field(3, ge=1)
    price_model: str | None = None
    scoring: Scoring = "code"  # shopping success: the code's reward 1.0, or the paper's ASIN


@dataclass(frozen=True)
class SubtaskOutcome:
    k: int
    passed: bool
    graded: float
    found: bool | None  # the oracle: were the needed facts shown (None: none needed / llm)
    answer: str


@dataclass(frozen=True)
class TaskRun:
    config: str
    task_id: str
    strategy: str
    trial: int
    subtasks: list[SubtaskOutcome]
    sps: float | None
    usage: Usage  # the task agent's calls (its tool sub-calls included)
    memory_usage: Usage  # the memory system's own LLM calls (summaries, judges, extractors)
    extra_calls: int
    embedding_usage: Usage = field(default_factory=Usage)  # the memory's embedding calls
    agent: str = "oracle"
    parts: dict[str, int] = field(default_factory=dict)  # FlowState's prompt tokens by part

    @property
    def passed(self) -> list[bool]:
        return [s.passed for s in self.subtasks]


class ArenaRunner(Harness[TaskRun]):
    kind = "arena"
    result_type = TaskRun
    prefix = "arena"

    def __init__(
        self,
        config: RunConfig,
        data: ArenaData,
        store: Store | None = None,
        progress: Callable[[str], None] | None = None,
        journal: Journal | None = None,
    ) -> None:
        bad = set(config.configs) - set(CONFIGS)
        if bad:
            raise UsageError(f"unknown configs {sorted(bad)}; from {', '.join(CONFIGS)}")
        # read now: a memory may be registered after import
        known = (*FLOWSTATE_VARIANTS, *MEMORIES, *SHARED_MEMORIES)
        super().__init__(config, store, None, journal, known=known)
        self.config: RunConfig = config
        self.data = data
        self.say = progress or (lambda _: None)
        # Set once any session has answered: before that, a model error is the setup's (an
        # unknown model, a missing key) and fails the run instead of scoring every task 0.
        self.model_answered = False
        judge = Judge(LiteLLMClient(config.judge_model) if config.judge_model else None)
        self.resources = Resources(
            config.product_db, config.travel_db, config.cache_dir, judge, config.scoring
        )

    def groups(self) -> list[str]:
        return list(self.config.configs)

    def tasks(self, name: str) -> list[ArenaTask]:
        return select(self.data.tasks(name), self.config.task_ids, self.config.limit)

    def total_subtasks(self) -> int:
        return sum(len(task) for _, task in self.units())

    def replays(self) -> dict[str, dict[str, list[list[bool | None]]]]:
        """The recall replay (gold results in memory, no agent) of each model-free memory."""
        out: dict[str, dict[str, list[list[bool | None]]]] = {}
        for name in self.config.configs:
            for strategy in (s for s in self.config.strategies if s in REPLAYABLE):
                per_task = []
                for task in self.tasks(name):
                    env = make_env(task, self.resources, lambda: NO_MODEL)
                    per_task.append(
                        replay(env, functools.partial(self._memory, strategy, NO_MODEL))
                    )
                out.setdefault(name, {})[strategy] = per_task
        return out

    def run_unit(self, unit: Unit, task: ArenaTask) -> TaskRun:
        return self.task_run(task, unit.strategy, unit.trial, unit.agent)

    def task_run(
        self, task: ArenaTask, strategy: str, trial: int, agent: str | None = None
    ) -> TaskRun:
        c = self.config
        agent = agent or c.agent
        slot: list[ModelClient] = []
        env = make_env(task, self.resources, lambda: slot[0])
        scripted: ScriptedAgent | None = None
        if agent == "llm":
            assert c.model is not None
            slot.append(LiteLLMClient(c.model, **c.model_kwargs))
        else:
            unit = Unit(task.config, strategy, trial, task.id, agent)
            style: Literal["flowstate", "loop"] = (
                "flowstate" if strategy in FLOWSTATE_VARIANTS else "loop"
            )
            scripted = ScriptedAgent(
                self.scripted_name(unit),
                env,
                style,
                forgetful=agent == "forgetful",
                reader=agent == "reader",
                one_step=c.one_step,
            )
            slot.append(scripted.client())
        try:
            run = self._subtasks(task, strategy, trial, env, slot[0], scripted, agent)
        finally:
            if scripted is not None:
                scripted.close()
        return run

    def _subtasks(
        self,
        task: ArenaTask,
        strategy: str,
        trial: int,
        env: TaskEnv,
        client: ModelClient,
        scripted: ScriptedAgent | None,
        agent_kind: str = "oracle",
    ) -> TaskRun:
        memory: MemoryStrategy | None = None
        usage, extra = Usage(), 0
        parts: dict[str, int] = {}
        agent: Strategy
        if strategy in FLOWSTATE_VARIANTS:
            agent = self._flowstate(task, strategy, trial, env, client, agent_kind)
            base = env.base_request()
            if base is not None:
                result = agent.respond(base)
                usage += result.usage
                parts = add_parts(parts, result.parts)
        else:
            memory = self._memory(strategy, client)
            agent = make_strategy(env, client, memory)
        outcomes: list[str] = []
        answers: list[str] = []
        for k in range(1, len(task) + 1):
            if scripted is not None:
                scripted.begin(k)
            try:
                result = agent.respond(env.prompt(k))
                self.model_answered = True
            except (ModelError, RequestInterrupted) as e:
                if not self.model_answered:
                    raise
                # One failed session must not lose a long run: the subtask scores what the
                # environment holds (nothing, usually) and the next one starts.
                result = TurnResult(f"[model failed: {e}]", Usage(), outcome="failed")
            usage, extra = usage + result.usage, extra + result.extra_calls
            parts = add_parts(parts, result.parts)
            answers.append(result.answer)
            outcomes.append(env.outcome(k, result.answer))
            self.say(f"{task.config} {strategy} task {task.id} subtask {k}/{len(task)}")
        scored = env.score(outcomes)
        found = scripted.found if scripted is not None else {}
        subtasks = [
            SubtaskOutcome(k, p, g, found.get(k), a[:500])
            for k, (p, g, a) in enumerate(
                zip(scored.passed, scored.graded, answers, strict=True), 1
            )
        ]
        mem_usage = memory.usage if memory is not None else Usage()
        emb_usage = embedding_usage(memory) if memory is not None else Usage()
        extra += memory.extra_calls if memory is not None else 0
        usage += env.usage  # the task model's calls from inside the tools
        return TaskRun(
            task.config,
            task.id,
            strategy,
            trial,
            subtasks,
            scored.sps,
            usage,
            mem_usage,
            extra,
            emb_usage,
            agent_kind,
            parts,
        )

    def _memory(self, strategy: str, client: ModelClient) -> MemoryStrategy:
        c = self.config
        strategy = ALIASES.get(strategy, strategy)
        if strategy in SHARED_MEMORIES:
            embedder = Embedder(c.embedding_model)
            return make_memory(strategy, self.memory_clients.client(), embedder, c.embedding_k)
        return MEMORIES[strategy](client)

    def _flowstate(
        self,
        task: ArenaTask,
        variant: str,
        trial: int,
        env: TaskEnv,
        client: ModelClient,
        agent: str = "oracle",
    ) -> Strategy:
        assert self.store is not None
        namespace = self.namespace(task.config, variant, agent, f"t{trial}", task.id)
        fs = FlowState(self.store, namespace)
        config = AgentConfig(
            max_steps=steps_of(task.config),
            index_budget_tokens=self.config.index_budget_tokens,
            prefetch_states=self.config.prefetch_states,
            recent_observations=self.config.recent_observations,
        )
        return FlowStateStrategy(
            fs, client, env.tools(), policy_of(task.config), config, variant=variant
        )
