"""The agents compared, all behind `respond(user_turn)`: FlowState (the real engine, and its
two ablations) and baselines written as plain loops over the same ModelClient, tools and policy.

- full: every past turn, tool calls and results included, goes back into the prompt;
- bm25: only the top-k past messages by BM25 against the new user turn;
- zipact (alias summary): a rolling summary, rewritten by one extra model call after every
  turn (ZipAct-like);
- zipact_bm25: the rolling summary plus the top-k past messages by BM25;
- embedding, reasoningbank, mem0-style: the shared memories of `flowstate_bench.baselines`,
  each fed one transcript per finished turn (`MemoryBacked`).

A baseline step is one JSON action: {"type": "tool", "name": ..., "arguments": {...}} or
{"type": "final", "answer": ...}. Tokens are what the provider reports per call.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from flowstate.engine.tools import Tool
from flowstate.llm.client import ModelClient
from flowstate.models.records import Usage
from flowstate.tokens import compact_json
from flowstate_bench import strategy_names
from flowstate_bench.seam import (
    FlowStateStrategy,
    LoopAction,
    MemoryStrategy,
    SpendMeter,
    Strategy,
    TurnResult,
    policy_part,
)

__all__ = [
    "STRATEGIES",
    "BM25Retrieval",
    "FlowStateStrategy",
    "FullContext",
    "LoopAction",
    "LoopStrategy",
    "MemoryBacked",
    "policy_part",
    "RollingSummary",
    "Strategy",
    "TurnResult",
    "ZipActBM25",
]

Message = dict[str, Any]
STRATEGIES = strategy_names.TAU
DEFAULT_STRATEGIES = strategy_names.TAU_DEFAULT
TOOL_RESULT = "TOOL RESULT"
SUMMARY_SYSTEM = (
    "You maintain the working memory of a customer-service agent. Rewrite the summary so that "
    "it keeps every fact later turns may need: the user's identity, ids, amounts, what was "
    "agreed or done and what is still pending (with exact arguments). Be brief otherwise."
)


class SummaryUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    summary: str


class LoopStrategy:
    """A baseline: system prompt, whatever `context` keeps of the past, then this turn."""

    name = "loop"

    def __init__(
        self, client: ModelClient, tools: list[Tool], policy: str, max_steps: int = 30
    ) -> None:
        self.client = client
        self.tools = {t.name: t for t in tools}
        self.max_steps = max_steps
        self.system = _system_prompt(policy, tools)

    def context(self, text: str) -> list[Message]:
        raise NotImplementedError

    def remember(self, turn: list[Message]) -> TurnResult | None:
        """Keep what this strategy keeps of a finished turn; may cost model calls."""
        raise NotImplementedError

    def respond(self, text: str) -> TurnResult:
        turn: list[Message] = [{"role": "user", "content": text}]
        usage, answer, outcome = Usage(), "", "step_limit"
        past = self.context(text)
        for _ in range(self.max_steps):
            msgs = [{"role": "system", "content": self.system}, *past, *turn]
            done = self.client.complete(msgs, LoopAction)
            usage += done.usage
            action = done.value
            if action is None:
                turn += [_assistant(done.text), _user(f"Unusable reply ({done.error}).")]
            elif action.type == "tool":
                turn += [_assistant(done.text), _user(self._run_tool(action))]
            else:
                answer, outcome = action.answer, "answered"
                turn.append(_assistant(answer))
                break
        extra = self.remember(turn)
        if extra is None:
            return TurnResult(answer, usage, 0, outcome)
        return TurnResult(
            answer,
            usage,
            extra.extra_calls,
            outcome,
            memory_usage=extra.memory_usage,
            embedding_usage=extra.embedding_usage,
        )

    def _run_tool(self, action: LoopAction) -> str:
        tool = self.tools.get(action.name)
        if tool is None:
            return f"{TOOL_RESULT} [error]: unknown tool {action.name!r}"
        result = tool.call(action.arguments)
        status = "error" if result.is_error else "ok"
        return f"{TOOL_RESULT} {action.name} [{status}]: {result.output}"


class FullContext(LoopStrategy):
    name = "full"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.history: list[Message] = []

    def context(self, text: str) -> list[Message]:
        return list(self.history)

    def remember(self, turn: list[Message]) -> None:
        self.history += turn


class BM25Retrieval(LoopStrategy):
    name = "bm25"

    def __init__(self, *args: Any, top_k: int = 5, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.top_k = top_k
        self.past: list[Message] = []

    def context(self, text: str) -> list[Message]:
        if not self.past:
            return []
        from rank_bm25 import BM25Okapi

        corpus = [_words(m["content"]) or [""] for m in self.past]
        scores = BM25Okapi(corpus).get_scores(_words(text))
        best = sorted(range(len(self.past)), key=lambda i: -scores[i])[: self.top_k]
        picked = [self.past[i] for i in sorted(best)]  # in conversation order
        lines = [f"[{m['role']}] {m['content']}" for m in picked]
        head = f"# Retrieved from earlier in this conversation ({len(picked)} of {len(corpus)})"
        return [_user(head + "\n" + "\n\n".join(lines))]

    def remember(self, turn: list[Message]) -> None:
        self.past += turn


class RollingSummary(LoopStrategy):
    name = "zipact"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.summary = ""

    def context(self, text: str) -> list[Message]:
        return (
            [_user(f"# Summary of the conversation so far\n{self.summary}")] if self.summary else []
        )

    def remember(self, turn: list[Message]) -> TurnResult:
        latest = transcript(turn)
        msgs = [
            {"role": "system", "content": SUMMARY_SYSTEM},
            _user(f"# Previous summary\n{self.summary or '(none)'}\n\n# Latest turn\n{latest}"),
        ]
        done = self.client.complete(msgs, SummaryUpdate)
        if done.value is not None:
            self.summary = done.value.summary
        return TurnResult("", Usage(), extra_calls=1, memory_usage=done.usage)


class ZipActBM25(RollingSummary):
    """The rolling summary, plus the top-k past messages by BM25 against the new turn."""

    name = "zipact_bm25"

    def __init__(self, *args: Any, top_k: int = 5, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.retrieval = BM25Retrieval(*args, top_k=top_k, **kwargs)

    def context(self, text: str) -> list[Message]:
        return [*super().context(text), *self.retrieval.context(text)]

    def remember(self, turn: list[Message]) -> TurnResult:
        self.retrieval.remember(turn)
        return super().remember(turn)


class MemoryBacked(LoopStrategy):
    """A `MemoryStrategy` in the tau-bench loop: its context for the new turn in front, the
    finished turn's transcript added after; its own calls reported as memory usage."""

    def __init__(self, memory: MemoryStrategy, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.memory, self.name = memory, memory.name
        self.meter = SpendMeter(memory)

    def context(self, text: str) -> list[Message]:
        recalled = self.memory.context(text)
        return [_user(f"# Recalled from memory\n{recalled}")] if recalled else []

    def remember(self, turn: list[Message]) -> TurnResult:
        self.memory.add(transcript(turn))
        llm, embedding, calls = self.meter.since_last()
        return TurnResult("", Usage(), calls, memory_usage=llm, embedding_usage=embedding)


def transcript(turn: list[Message]) -> str:
    return "\n\n".join(f"[{m['role']}] {m['content']}" for m in turn)


def _system_prompt(policy: str, tools: list[Tool]) -> str:
    # Compact, as a provider's bill would count the schemas: indentation is padding the
    # baselines would pay for on every call.
    schemas = compact_json([t.schema()["function"] for t in tools])
    return (
        f"# Domain policy\n{policy}\n\n# Tools (JSON schemas)\n{schemas}\n\n"
        "At every step reply with ONE JSON object: "
        '{"type": "tool", "name": "<tool>", "arguments": {...}} to call a tool (its result '
        f'comes back as a message starting with "{TOOL_RESULT}"), or '
        '{"type": "final", "answer": "<your message to the user>"} to reply to the user.'
    )


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _user(content: str) -> Message:
    return {"role": "user", "content": content}


def _assistant(content: str) -> Message:
    return {"role": "assistant", "content": content}
