"""Runs tasks: for each strategy, trial and task, one conversation between a user and an
agent over a fresh environment, then its score.

FlowState gets its own namespace per conversation (or, with `persist`, one per domain and
trial, so what it learnt in one task is in the index of the next). Namespaces are forgotten
at the end unless `keep_memory` is set.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from flowstate.api import FlowState
from flowstate.engine.agent import AgentConfig
from flowstate.errors import UsageError
from flowstate.llm.client import LiteLLMClient, ModelClient
from flowstate.models.records import Usage
from flowstate.store import Store
from flowstate_bench.baselines import make_memory
from flowstate_bench.embedding import LOCAL_MODEL, Embedder
from flowstate_bench.memory_models import MemoryClients
from flowstate_bench.seam import (
    Namespaces,
    TurnResult,
)
from flowstate_bench.strategy_names import ALIASES, FLOWSTATE_VARIANTS, SHARED_MEMORIES
from flowstate_bench.tau.data import Task, TauData
from flowstate_bench.tau.env import Environment, EnvOptions, ToolCallRecord, make_env
from flowstate_bench.tau.oracle import ScriptedAgent
from flowstate_bench.tau.plan import Plan, derive_plan
from flowstate_bench.tau.scoring import Scorer, TaskScore
from flowstate_bench.tau.strategies import (
    DEFAULT_STRATEGIES,
    STRATEGIES,
    BM25Retrieval,
    FlowStateStrategy,
    FullContext,
    MemoryBacked,
    RollingSummary,
    Strategy,
    ZipActBM25,
)
from flowstate_bench.tau.users import GREETING, LLMUser, ScriptedUser, User

AgentKind = Literal["oracle", "forgetful", "llm"]


class RunConfig(BaseModel):
    """One benchmark run; every field has a default except the domain."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    domain: str
    strategies: list[str] = list(DEFAULT_STRATEGIES)
    trials: int = Field(1, ge=1)
    agent: AgentKind = "oracle"
    model: str | None = None  # litellm model for --agent llm
    user: Literal["scripted", "llm"] | None = None  # default: scripted unless the agent is llm
    user_model: str | None = None  # default: the agent's model
    task_ids: list[str] | None = None
    limit: int | None = Field(None, ge=1)  # the first N tasks
    persist: bool = False
    max_turns: int = Field(30, ge=1)
    max_steps: int = Field(30, ge=1)
    bm25_k: int = Field(5, ge=1)
    embedding_k: int = Field(3, ge=1)
    # The memories' own LLM (judge, extractors, summaries of zipact excluded: that one is the
    # agent's); default the agent's model, or a scripted one for oracle/forgetful agents.
    memory_model: str | None = None
    embedding_model: str = LOCAL_MODEL
    price_model: str | None = None  # prices offline token counts (see flowstate_bench.costs)
    index_budget_tokens: int = Field(2_000, ge=50)
    keep_memory: bool = False
    model_kwargs: dict[str, Any] = {}
    # Departs from the original (see EnvOptions); off, results compare with published ones.
    fix_multi_item_modify: bool = False

    @property
    def env_options(self) -> EnvOptions:
        return EnvOptions(fix_multi_item_modify=self.fix_multi_item_modify)

    @property
    def user_kind(self) -> str:
        return self.user or ("llm" if self.agent == "llm" else "scripted")


@dataclass(frozen=True)
class Conversation:
    task_id: str
    strategy: str
    trial: int
    score: TaskScore
    db_scored: bool  # DB is in the task's reward basis
    turns: int
    usage: Usage  # the task agent's model calls, not the user's nor the memory's
    extra_calls: int
    user_usage: Usage
    ended: str
    memory_usage: Usage = field(default_factory=Usage)  # the memory's own LLM calls
    embedding_usage: Usage = field(default_factory=Usage)  # the memory's embedding calls
    answers: list[str] = field(default_factory=list, repr=False)
    calls: list[ToolCallRecord] = field(default_factory=list, repr=False)


@dataclass
class Spent:
    """A conversation's spend: the agent's, and the memory's LLM and embedding calls."""

    usage: Usage = field(default_factory=Usage)
    memory: Usage = field(default_factory=Usage)
    embedding: Usage = field(default_factory=Usage)
    extra_calls: int = 0

    def add(self, result: TurnResult) -> None:
        self.usage += result.usage
        self.memory += result.memory_usage
        self.embedding += result.embedding_usage
        self.extra_calls += result.extra_calls


def converse(
    strategy: Strategy,
    user: User,
    on_turn: Callable[[int], None] | None = None,
    max_turns: int = 30,
) -> tuple[list[str], Spent, str]:
    """User and agent take turns; every user turn is one request to the agent."""
    answers: list[str] = []
    spent, message = Spent(), GREETING
    for turn in range(max_turns):
        text = user.next(message)
        if text is None:
            return answers, spent, user.ended or "stop"
        if on_turn is not None:
            on_turn(turn)
        result = strategy.respond(text)
        spent.add(result)
        message = result.answer
        answers.append(message)
    return answers, spent, "max_turns"


class TauRunner:
    def __init__(
        self,
        config: RunConfig,
        data: TauData,
        store: Store | None = None,
        progress: Callable[[Conversation], None] | None = None,
    ) -> None:
        unknown = set(config.strategies) - set(STRATEGIES) - set(ALIASES)
        if unknown:
            raise UsageError(f"unknown strategies {sorted(unknown)}; from {', '.join(STRATEGIES)}")
        if set(config.strategies) & set(FLOWSTATE_VARIANTS) and store is None:
            raise UsageError("the flowstate strategies need a Neo4j store")
        if config.agent == "llm" and not config.model:
            raise UsageError("--agent llm needs --model")
        if config.user_kind == "llm" and not (config.user_model or config.model):
            raise UsageError("the llm user needs --user-model (or --model)")
        self.config, self.data, self.store, self.progress = config, data, store, progress
        self.scorer = Scorer(data, config.env_options)
        self.run_id = uuid.uuid4().hex[:8]
        self.namespaces = Namespaces(store, config.keep_memory)
        self.policy = data.policy(config.domain)
        self.memory_clients = MemoryClients(
            config.memory_model,
            config.agent,
            config.model,
            f"tau-memory-{self.run_id}",
            **config.model_kwargs,
        )

    def tasks(self) -> list[Task]:
        tasks = self.data.tasks(self.config.domain)
        if self.config.task_ids is not None:
            wanted = set(self.config.task_ids)
            tasks = [t for t in tasks if t.id in wanted]
        return tasks[: self.config.limit] if self.config.limit else tasks

    def run(self) -> list[Conversation]:
        done = []
        try:
            for strategy in self.config.strategies:
                for trial in range(self.config.trials):
                    for task in self.tasks():
                        conv = self.conversation(task, strategy, trial)
                        done.append(conv)
                        if self.progress is not None:
                            self.progress(conv)
        finally:
            self.cleanup()
            self.memory_clients.close()
        return done

    def conversation(self, task: Task, strategy: str, trial: int) -> Conversation:
        env = make_env(task.domain, self.data, task, self.config.env_options)
        plan = derive_plan(task, env.WRITE_TOOLS)
        scripted, client = self._agent(task, plan, strategy, trial)
        try:
            agent = self._strategy(strategy, client, env, task, trial)
            user = self._user(task, plan)
            on_turn = scripted.begin_turn if scripted is not None else None
            answers, spent, ended = converse(agent, user, on_turn, self.config.max_turns)
        finally:
            if scripted is not None:
                scripted.close()
        return Conversation(
            task_id=task.id,
            strategy=strategy,
            trial=trial,
            score=self.scorer.score(task, env, answers),
            db_scored="DB" in task.reward_basis,
            turns=len(answers),
            usage=spent.usage,
            extra_calls=spent.extra_calls,
            user_usage=user.usage,
            ended=ended,
            memory_usage=spent.memory,
            embedding_usage=spent.embedding,
            answers=answers,
            calls=list(env.calls),
        )

    def _agent(
        self, task: Task, plan: Plan, strategy: str, trial: int
    ) -> tuple[ScriptedAgent | None, ModelClient]:
        if self.config.agent == "llm":
            assert self.config.model is not None
            return None, LiteLLMClient(self.config.model, **self.config.model_kwargs)
        name = f"tau-{self.config.agent}-{self.run_id}-{strategy}-{trial}-{task.id}"
        style = "flowstate" if strategy in FLOWSTATE_VARIANTS else "loop"
        scripted = ScriptedAgent(name, plan, style, forgetful=self.config.agent == "forgetful")
        return scripted, scripted.client()

    def _strategy(
        self, name: str, client: ModelClient, env: Environment, task: Task, trial: int
    ) -> Strategy:
        c, tools, policy = self.config, env.tools(), self.policy
        name = ALIASES.get(name, name)
        if name in FLOWSTATE_VARIANTS:
            assert self.store is not None
            fs = FlowState(self.store, self._namespace(task, name, trial))
            config = AgentConfig(max_steps=c.max_steps, index_budget_tokens=c.index_budget_tokens)
            return FlowStateStrategy(fs, client, tools, policy, config, variant=name)
        if name == "full":
            return FullContext(client, tools, policy, max_steps=c.max_steps)
        if name == "bm25":
            return BM25Retrieval(client, tools, policy, max_steps=c.max_steps, top_k=c.bm25_k)
        if name == "zipact_bm25":
            return ZipActBM25(client, tools, policy, max_steps=c.max_steps, top_k=c.bm25_k)
        if name in SHARED_MEMORIES:
            memory = make_memory(
                name, self.memory_clients.client(), Embedder(c.embedding_model), c.embedding_k
            )
            return MemoryBacked(memory, client, tools, policy, max_steps=c.max_steps)
        return RollingSummary(client, tools, policy, max_steps=c.max_steps)

    def _user(self, task: Task, plan: Plan) -> User:
        if self.config.user_kind == "scripted":
            return ScriptedUser(plan.turns)
        model = self.config.user_model or self.config.model
        assert model is not None
        client = LiteLLMClient(model, **self.config.model_kwargs)
        return LLMUser(client, task.scenario, self.data.guidelines)

    def _namespace(self, task: Task, strategy: str, trial: int) -> str:
        # One namespace per strategy: the ablations must not read FlowState's states.
        parts = ["tau", self.config.domain, self.run_id, strategy, f"t{trial}"]
        if not self.config.persist:
            parts.append(task.id)
        return self.namespaces.new(*parts)

    def cleanup(self) -> None:
        self.namespaces.cleanup()
