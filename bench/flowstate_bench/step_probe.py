"""Step overhead: what the engine itself adds to every step, with the model call taken out.

The real `Agent` runs real requests against the namespace; only the model is a double that
answers a prepared plan after a fixed think time and stamps the clock on entry and exit. The
time between leaving call k and entering call k+1 is the engine's critical path for one
step: waiting for the draft save that ran during the call (write-behind; nothing when it
finished in time), absorbing the output (delta and access rules), revealing what was asked
for, and building the next prompt (index render + messages). Steps that reveal 8 states and
steps that reveal nothing alternate, so both are measured. Parsing the reply is the model
client's job, so the plan hands over ready `StepOutput` objects.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from flowstate.engine.agent import Agent, AgentConfig
from flowstate.engine.index import HistoricalIndex, RenderedIndex
from flowstate.engine.transcript import Transcript
from flowstate.llm.client import Completion, TextFormat
from flowstate.models import StepOutput, Usage
from flowstate.models.views import IndexState
from flowstate.store import Repository

STEPS = 8  # per request: 7 measured gaps (the last step answers and commits)
OPS = 10  # delta operations per step
ACCESS = 8  # past states revealed per step (the default limit K)
T = TypeVar("T", bound=BaseModel)
THINK_MS = 40.0  # the model double's latency: a real model's is far longer, never shorter
# After step 1 (which opens a request): even steps reveal 8 states, odd ones nothing.
REVEALING = frozenset(range(2, STEPS, 2))


@dataclass
class TimingClient:
    """A `ModelClient` that replays a plan and records when each call starts and ends."""

    plan: list[StepOutput] = field(default_factory=list)
    think_ms: float = THINK_MS
    model: str = "bench-timing"
    entered: list[float] = field(default_factory=list)
    left: list[float] = field(default_factory=list)

    def reset(self, plan: list[StepOutput]) -> None:
        self.plan, self.entered, self.left = list(plan), [], []

    def complete(
        self, messages: list[dict[str, Any]], schema: type[T] | TextFormat[T]
    ) -> Completion[T]:
        self.entered.append(time.perf_counter())
        out = self.plan.pop(0)
        time.sleep(self.think_ms / 1e3)
        self.left.append(time.perf_counter())
        # The engine asks this double for steps only, so the reply is of the schema asked.
        return Completion("", cast(T, out), Usage(calls=1))

    async def acomplete(
        self, messages: list[dict[str, Any]], schema: type[T] | TextFormat[T]
    ) -> Completion[T]:
        return self.complete(messages, schema)

    def gaps_ms(self) -> list[float]:
        return [(self.entered[k + 1] - self.left[k]) * 1e3 for k in range(len(self.left) - 1)]


def _add(key: str, targets: list[str]) -> dict[str, Any]:
    return {
        "op": "add",
        "key": key,
        "category": "decision",
        "summary": f"bench decision {key}",
        "content": f"Decided {key} after reading {', '.join(targets) or 'nothing'}.",
        "relations": [{"type": "DERIVED_FROM", "target": t} for t in targets],
    }


def _update(key: str, step: int) -> dict[str, Any]:
    return {"op": "update", "key": key, "content": f"{key} revised at step {step}."}


def plan_request(
    rendered: RenderedIndex, states_of: Callable[[str], list[IndexState]], rng: random.Random
) -> list:
    """Step 1 opens a collapsed request (or reveals listed states); steps 2..7 record 3 new
    states with relations to its states plus 7 updates, and the even ones reveal 8 of its
    states; step 8 answers."""
    pool: list[str]
    if rendered.collapsed:
        opened = rng.choice(sorted(rendered.collapsed))
        pool = [s.id for s in states_of(opened)]
        first_access = [opened]
    else:
        pool = sorted(rendered.state_ids)
        first_access = pool[:ACCESS]
    rng.shuffle(pool)
    own = [f"k{i:02d}" for i in range(OPS)]
    steps = [{"delta": [_add(k, []) for k in own], "access": first_access}]
    revealed = 0
    for step in range(2, STEPS):
        ask = pool[revealed * ACCESS : (revealed + 1) * ACCESS] if step in REVEALING else []
        revealed += step in REVEALING
        # Opened or listed states are visible, so new states may relate to any of them.
        adds = [_add(f"n{step}_{i}", _pick(pool, step * 3 + i)) for i in range(3)]
        updates = [_update(k, step) for k in own[: OPS - 3]]
        steps.append({"delta": adds + updates, "access": ask})
    last = [_update(k, STEPS) for k in own]
    steps.append({"delta": last, "action": {"type": "final", "answer": "ok", "summary": "bench"}})
    return [StepOutput.model_validate(s) for s in steps]


def _pick(pool: list[str], at: int) -> list[str]:
    return [pool[at % len(pool)], pool[(at + 1) % len(pool)]] if len(pool) > 1 else pool[:1]


@dataclass
class StepRun:
    gaps_ms: list[float]  # the k-th follows step k: opened, reveal, plain, reveal, plain...
    start_ms: float  # run() entry to the first model call: index refresh, seq, first draft
    finish_ms: float  # last model call to run() return: final absorb, commit, index refresh
    prompt_chars: int

    @property
    def reveal_gaps_ms(self) -> list[float]:
        """Steps that revealed 8 states before the next call."""
        return [g for k, g in enumerate(self.gaps_ms, start=1) if k in REVEALING]

    @property
    def plain_gaps_ms(self) -> list[float]:
        """Steps that revealed nothing."""
        return [g for k, g in enumerate(self.gaps_ms, start=1) if k > 1 and k not in REVEALING]


def run_requests(repo: Repository, index: HistoricalIndex, n: int, seed: int) -> list[StepRun]:
    """`n` measured requests; each is forgotten afterwards so the namespace keeps its size."""
    client = TimingClient()
    agent = Agent(repo, client, config=AgentConfig(), index=index)
    rng = random.Random(seed)
    told: list[str] = []
    agent.on_step = lambda active: told.extend(active.rejections)
    runs = []
    for _ in range(n):
        agent.on_call = seen = Transcript()
        # Plan on the index the prompt will show: the last request was forgotten, so the
        # agent reloads its index (the one passed in still lists that request).
        agent.refresh_index()
        text = "bench: review the opened request and record decisions"
        client.reset(plan_request(agent.index.render(text), repo.request_states, rng))
        t0 = time.perf_counter()
        result = agent.run(text)
        t1 = time.perf_counter()
        if result.steps != STEPS or result.rejections:
            why = result.error or "; ".join(told) or result.rejections
            raise RuntimeError(f"step probe went off plan: {why}")
        runs.append(
            StepRun(
                client.gaps_ms(),
                (client.entered[0] - t0) * 1e3,
                (t1 - client.left[-1]) * 1e3,
                sum(len(m["content"]) for m in seen.prompts[-1]),
            )
        )
        repo.forget_request(result.request_id)
    return runs
