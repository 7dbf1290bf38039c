"""The seam every benchmark harness plugs its agents into: one `Strategy` per conversation (or
per task), answering `respond(text) -> TurnResult`; and, for memory systems that only store and
retrieve text, the `MemoryStrategy` protocol (`add(chunk)`, `context(query)`).

tau-bench and MemoryArena share these names, so a baseline written once (a retrieval memory, a
hosted memory service) runs in both. FlowState itself is a `Strategy`: each `respond` is one
request to a FlowState agent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from flowstate.api import FlowState
from flowstate.engine.agent import AgentConfig
from flowstate.engine.prompt import INDEX, INDEX_HEADER, PROTOCOL, REQUEST, Prompt, PromptPart
from flowstate.engine.prompt_costs import total_parts
from flowstate.engine.tools import Tool
from flowstate.engine.transcript import Transcript
from flowstate.llm.client import Completion, ModelClient
from flowstate.models.records import MAX_CONTENT_CHARS, Usage
from flowstate.models.step import StepOutput
from flowstate.rules.limits import Limits
from flowstate.store import Repository, Store
from flowstate_bench.strategy_names import FLOWSTATE_VARIANTS

Message = dict[str, Any]


class LoopAction(BaseModel):
    """One step of a baseline agent: a tool call or the final reply."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["tool", "final"]
    name: str = ""
    arguments: dict[str, Any] = {}
    answer: str = ""


@dataclass(frozen=True)
class TurnResult:
    answer: str
    usage: Usage  # every model call of the turn, the summary call included
    extra_calls: int = 0  # calls that are not agent steps (summaries)
    outcome: str = "answered"
    # A memory system's own model calls (its extraction, its summaries), kept apart from
    # the task agent's so reports can show both columns.
    memory_usage: Usage = field(default_factory=Usage)
    embedding_usage: Usage = field(default_factory=Usage)  # the memory's embedding calls
    # FlowState: the prompt tokens of the turn's calls by part (flowstate.engine.prompt_costs).
    parts: dict[str, int] = field(default_factory=dict)


class Strategy(Protocol):
    name: str

    def respond(self, text: str) -> TurnResult: ...


class MemoryStrategy(Protocol):
    """A memory that stores text chunks and returns what it recalls for a query.

    `usage` and `extra_calls` count the memory's own model calls (zero for pure retrieval).
    """

    @property
    def name(self) -> str: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def extra_calls(self) -> int: ...

    def add(self, chunk: str) -> None: ...

    def context(self, query: str) -> str: ...


def embedding_usage(memory: MemoryStrategy) -> Usage:
    """A memory's embedding spend (zero for memories that embed nothing)."""
    return getattr(memory, "embedding_usage", None) or Usage()


def _minus(a: Usage, b: Usage) -> Usage:
    return Usage(
        prompt_tokens=a.prompt_tokens - b.prompt_tokens,
        completion_tokens=a.completion_tokens - b.completion_tokens,
        calls=a.calls - b.calls,
    )


class SpendMeter:
    """What a memory spent since the last reading: (LLM usage, embedding usage, LLM calls)."""

    def __init__(self, memory: MemoryStrategy) -> None:
        self.memory = memory
        self.last: tuple[Usage, Usage, int] = (Usage(), Usage(), 0)

    def since_last(self) -> tuple[Usage, Usage, int]:
        m = self.memory
        now = (m.usage, embedding_usage(m), m.extra_calls)
        llm, emb, calls = self.last
        self.last = now
        return _minus(now[0], llm), _minus(now[1], emb), now[2] - calls


def policy_part(policy: str) -> Callable[[Prompt], Prompt]:
    """A prompt processor that puts the domain policy in front of the system message, so the
    FlowState engine's prompt carries the same policy as the baselines' prompts."""
    part = PromptPart("policy", policy, "# Domain policy", role="system")
    return lambda prompt: prompt.inserted(part, before=PROTOCOL)


NO_PSA_HEADER = "(no PSA: every past state, in full)"
# The part of a no-PSA prompt that is memory, as a model reads it (a forgetful scripted model
# skips it): from the header to the request that follows the index.
NO_PSA_BLOCK = re.compile(re.escape(NO_PSA_HEADER) + r".*?(?=\n\n# User request \()", re.DOTALL)


class EveryState:
    """FlowState without Progressive State Access, as a prompt processor: before every call
    the index is replaced by the full content of every past state (what an Active State that
    keeps everything carries). The states are read from the namespace, so nothing is hidden
    from the model and nothing needs an access step."""

    def __init__(self, fs: FlowState) -> None:
        self.fs = fs

    def __call__(self, prompt: Prompt) -> Prompt:
        ids = [
            s.id for r in self.fs.repository.index() for s in r.states if s.superseded_by is None
        ]
        shown = self.fs.reveal(ids) if ids else []
        lines = [f"- {r.state.id} [{r.state.category}] {r.state.summary}\n  {r.state.content}"
                 for r in shown]  # fmt: skip
        text = NO_PSA_HEADER + "\n" + ("\n".join(lines) or "(none yet)")
        if prompt.get(INDEX) is None:  # a first request shows no index: it gets this one
            return prompt.inserted(PromptPart(INDEX, text, INDEX_HEADER), before=REQUEST)
        return prompt.replaced(INDEX, text)


def rule_states(prompt: Prompt, done: Completion[StepOutput]) -> Completion[StepOutput]:
    """FlowState without Intelligent State Updating, as a reply processor: the model's state
    writes are dropped, and at each subtask boundary (the step that gives the final answer) a
    rule writes one state: the request's text and the answer, under a summary made from the
    request's first words."""
    out = done.value
    if out is None:
        return done
    delta: list[dict[str, Any]] = []
    request = prompt.text(REQUEST)
    if out.action is not None and out.action.type == "final" and request:
        seq = prompt.request_id.removeprefix("r")
        summary = f"Turn {seq}: {' '.join(request.split())}"[: Limits().max_summary_chars]
        content = f"Request: {request}\nAnswer: {out.action.answer}"
        delta = [{"op": "add", "key": f"turn_{seq}", "category": "artifact",
                  "summary": summary, "content": content[:MAX_CONTENT_CHARS]}]  # fmt: skip
    value = StepOutput.model_validate({**out.model_dump(exclude={"delta"}), "delta": delta})
    return Completion(done.text, value, done.usage, done.error, done.finish_reason, done.sent)


class FlowStateStrategy:
    """One FlowState agent per conversation; each user turn is one `agent.run`.

    `variant` picks the ablation: `flowstate_no_psa` (every past state in the prompt) or
    `flowstate_no_isu` (rule-made states at subtask boundaries instead of the model's)."""

    name = "flowstate"

    def __init__(
        self,
        fs: FlowState,
        client: ModelClient,
        tools: list[Tool],
        policy: str,
        config: AgentConfig,
        variant: str = "flowstate",
    ) -> None:
        if variant not in FLOWSTATE_VARIANTS:
            raise ValueError(f"unknown FlowState variant {variant!r}")
        self.name = variant
        self.agent = fs.agent(client, tools=tools, config=config)
        self.agent.prompt_processors.append(policy_part(policy))
        if variant == "flowstate_no_psa":
            self.agent.prompt_processors.append(EveryState(fs))
        elif variant == "flowstate_no_isu":
            self.agent.reply_processors.append(rule_states)

    def respond(self, text: str) -> TurnResult:
        self.agent.on_call = seen = Transcript()
        result = self.agent.run(text)
        answer = result.answer or f"[no answer: {result.error}]"
        parts = total_parts((c.prompt, c.sent) for c in seen.calls)
        return TurnResult(answer, result.usage, 0, result.outcome.value, parts=parts)


def add_parts(total: dict[str, int], parts: dict[str, int]) -> dict[str, int]:
    return {k: total.get(k, 0) + parts.get(k, 0) for k in dict.fromkeys([*total, *parts])}


class Namespaces:
    """The FlowState namespaces a benchmark run creates, forgotten together at its end
    (unless `keep`)."""

    def __init__(self, store: Store | None, keep: bool = False) -> None:
        self.store, self.keep = store, keep
        self.names: set[str] = set()

    def new(self, *parts: str) -> str:
        name = "-".join(re.sub(r"[^A-Za-z0-9_.-]", "_", p) for p in parts)[:128]
        self.names.add(name)
        return name

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.names))

    def __len__(self) -> int:
        return len(self.names)

    def cleanup(self) -> None:
        if self.store is None or self.keep:
            return
        for name in sorted(self.names):
            Repository(self.store, name).forget_namespace(force=True)
