"""The seam every benchmark harness plugs its agents into: one `Strategy` per conversation (or
per task), answering `respond(text) -> TurnResult`; and, for memory systems that only store and
retrieve text, the `MemoryStrategy` protocol (`add(chunk)`, `context(query)`).

tau-bench and MemoryArena share these names, so a baseline written once (a retrieval memory, a
hosted memory service) runs in both. FlowState itself is a `Strategy`: each `respond` is one
request to a FlowState agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from flowstate.api import FlowState
from flowstate.engine.agent import AgentConfig
from flowstate.engine.tools import Tool
from flowstate.llm.client import Completion, ModelClient
from flowstate.models.records import Usage

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


class Strategy(Protocol):
    name: str

    def respond(self, text: str) -> TurnResult: ...


class MemoryStrategy(Protocol):
    """A memory that stores text chunks and returns what it recalls for a query.

    `usage` and `extra_calls` count the memory's own model calls (zero for pure retrieval).
    """

    name: str
    usage: Usage
    extra_calls: int

    def add(self, chunk: str) -> None: ...

    def context(self, query: str) -> str: ...


class PolicyClient:
    """A ModelClient that puts the domain policy in front of the system message, so the
    FlowState engine's prompt carries the same policy as the baselines' prompts."""

    def __init__(self, inner: ModelClient, policy: str) -> None:
        self.inner, self.policy = inner, policy
        self.model = inner.model

    def _with_policy(self, messages: list[Message]) -> list[Message]:
        head = f"# Domain policy\n{self.policy}\n\n"
        if messages and messages[0].get("role") == "system":
            return [{**messages[0], "content": head + messages[0]["content"]}, *messages[1:]]
        return [{"role": "system", "content": head}, *messages]

    def complete(self, messages: list[Message], schema: type) -> Completion:
        return self.inner.complete(self._with_policy(messages), schema)

    async def acomplete(self, messages: list[Message], schema: type) -> Completion:
        return await self.inner.acomplete(self._with_policy(messages), schema)


class FlowStateStrategy:
    """One FlowState agent per conversation; each user turn is one `agent.run`."""

    name = "flowstate"

    def __init__(
        self,
        fs: FlowState,
        client: ModelClient,
        tools: list[Tool],
        policy: str,
        config: AgentConfig,
    ) -> None:
        self.agent = fs.agent(PolicyClient(client, policy), tools=tools, config=config)

    def respond(self, text: str) -> TurnResult:
        result = self.agent.run(text)
        answer = result.answer or f"[no answer: {result.error}]"
        return TurnResult(answer, result.usage, 0, result.outcome.value)
