"""Runs tasks: for each strategy, trial and task, one conversation between a user and an
agent over a fresh environment, then its score.

FlowState gets its own namespace per conversation (or, with `persist`, one per domain and
trial, so what it learnt in one task is in the index of the next). Namespaces are forgotten
at the end unless `keep_memory` is set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from flowstate.api import FlowState
from flowstate.engine.agent import AgentConfig
from flowstate.engine.index import DEFAULT_BUDGET_TOKENS
from flowstate.errors import UsageError
from flowstate.llm.client import LiteLLMClient, ModelClient
from flowstate.models.records import Usage
from flowstate.store import Store
from flowstate_bench.baselines import make_memory
from flowstate_bench.embedding import LOCAL_MODEL, Embedder
from flowstate_bench.harness import AgentKind, Harness, Journal, Unit, select
from flowstate_bench.seam import TurnResult, add_parts
from flowstate_bench.strategy_names import ALIASES, FLOWSTATE_VARIANTS, SHARED_MEMORIES
from flowstate_bench.tau.data import Task, TauData
from flowstate_bench.tau.domains import make_env
from flowstate_bench.tau.env import Environment, EnvOptions, ToolCallRecord
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
    index_budget_tokens: int = Field(DEFAULT_BUDGET_TOKENS, ge=50)
    prefetch_states: int = Field(AgentConfig().prefetch_states, ge=0, le=64)  # the library's
    recent_observations: int = Field(AgentConfig().recent_observations, ge=0)  # the library's
    # The scripted agents access and act in one step when the action does not need what
    # they open (the protocol's rule); False: they always wait a step for it.
    one_step: bool = True
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
    agent: str = "oracle"
    # Scripted agents: per memory-dependent turn, whether its plan was in what it was shown.
    found: dict[int, bool] = field(default_factory=dict)
    parts: dict[str, int] = field(default_factory=dict)  # FlowState's prompt tokens by part


@dataclass
class Spent:
    """A conversation's spend: the agent's, and the memory's LLM and embedding calls."""

    usage: Usage = field(default_factory=Usage)
    memory: Usage = field(default_factory=Usage)
    embedding: Usage = field(default_factory=Usage)
    extra_calls: int = 0
    parts: dict[str, int] = field(default_factory=dict)

    def add(self, result: TurnResult) -> None:
        self.parts = add_parts(self.parts, result.parts)
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


class TauRunner(Harness[Conversation]):
    kind = "tau"
    result_type = Conversation
    prefix = "tau"

    def __init__(
        self,
        config: RunConfig,
        data: TauData,
        store: Store | None = None,
        progress: Callable[[Conversation], None] | None = None,
        journal: Journal | None = None,
    ) -> None:
        super().__init__(config, store, progress, journal, known=STRATEGIES)
        if config.user_kind == "llm" and not (config.user_model or config.model):
            raise UsageError("the llm user needs --user-model (or --model)")
        self.config: RunConfig = config
        self.data = data
        self.scorer = Scorer(data, config.env_options)
        self.policy = data.policy(config.domain)

    def groups(self) -> list[str]:
        return [self.config.domain]

    def tasks(self, group: str | None = None) -> list[Task]:
        c = self.config
        return select(self.data.tasks(c.domain), c.task_ids, c.limit)

    def check_resume(self, done: dict[str, Any]) -> None:
        if self.config.persist:
            raise UsageError(
                "a --persist run cannot resume: its memory spans the tasks, and the interrupted "
                "run's namespaces are not picked up again; use --fresh (`flowstate namespaces` "
                "lists what the interrupted run left, `flowstate forget --all -N NAME` drops it)"
            )

    def run_unit(self, unit: Unit, task: Task) -> Conversation:
        return self.conversation(task, unit.strategy, unit.trial, unit.agent)

    def conversation(
        self, task: Task, strategy: str, trial: int, agent: str | None = None
    ) -> Conversation:
        agent = agent or self.config.agent
        env = make_env(task.domain, self.data, task, self.config.env_options)
        plan = derive_plan(task, env.WRITE_TOOLS)
        unit = Unit(task.domain, strategy, trial, task.id, agent)
        scripted, client = self._agent(unit, plan)
        try:
            conv_agent = self._strategy(strategy, client, env, task, trial, agent)
            user = self._user(task, plan)
            on_turn = scripted.begin_turn if scripted is not None else None
            answers, spent, ended = converse(conv_agent, user, on_turn, self.config.max_turns)
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
            agent=agent,
            found=dict(scripted.found) if scripted is not None else {},
            parts=spent.parts,
        )

    def _agent(self, unit: Unit, plan: Plan) -> tuple[ScriptedAgent | None, ModelClient]:
        if unit.agent == "llm":
            assert self.config.model is not None
            return None, LiteLLMClient(self.config.model, **self.config.model_kwargs)
        style: Literal["flowstate", "loop"] = (
            "flowstate" if unit.strategy in FLOWSTATE_VARIANTS else "loop"
        )
        scripted = ScriptedAgent(
            self.scripted_name(unit),
            plan,
            style,
            forgetful=unit.agent == "forgetful",
            reader=unit.agent == "reader",
            one_step=self.config.one_step,
        )
        return scripted, scripted.client()

    def _strategy(
        self, name: str, client: ModelClient, env: Environment, task: Task, trial: int, agent: str
    ) -> Strategy:
        c, tools, policy = self.config, env.tools(), self.policy
        name = ALIASES.get(name, name)
        if name in FLOWSTATE_VARIANTS:
            assert self.store is not None
            fs = FlowState(self.store, self._namespace(task, name, trial, agent))
            config = AgentConfig(
                max_steps=c.max_steps,
                index_budget_tokens=c.index_budget_tokens,
                prefetch_states=c.prefetch_states,
                recent_observations=c.recent_observations,
            )
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

    def _namespace(self, task: Task, strategy: str, trial: int, agent: str = "oracle") -> str:
        # One namespace per strategy and agent: the ablations must not read FlowState's states.
        parts = [self.config.domain, strategy, agent, f"t{trial}"]
        if not self.config.persist:
            parts.append(task.id)
        return self.namespace(*parts)
