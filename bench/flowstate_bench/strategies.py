"""The baselines' prompts, built from the same turns FlowState sees. Pure: no model, no I/O.

Every strategy answers a request in the same two model calls (read the ticket, then answer),
with the ticket tool sent as a native tool definition (a compact JSON schema, as a provider
receives it), so the prompts differ only in how the past is carried:

- full context: every past turn verbatim (request, tool call, tool result, answer);
- BM25: the k past turns that rank best against the request text (rank_bm25);
- rolling summary (ZipAct-style): a bounded summary rewritten after every request by one
  extra model call. The summariser is simulated by an oracle that keeps every fact verbatim
  while it fits, newest first, so its recall is an upper bound for a real one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flowstate.engine.prompt import Prompt
from flowstate.engine.tools import Tool
from flowstate.llm.client import Sent
from flowstate.tokens import count_tokens
from flowstate_bench.scenarios import Turn

Message = dict[str, str]
BM25_K = 4
SUMMARY_BUDGET_TOKENS = 600
_WORD = re.compile(r"[a-z0-9]+")


def lookup_ticket(ticket: str) -> str:
    """Read a project ticket: its description, decisions and comments."""
    raise RuntimeError("replaced per scenario")  # only its signature is used for the schema


BASE_SYSTEM = (
    "You are the project assistant of Project Atlas. Read tickets with the tools, record what "
    "they settle, and answer the user's questions about earlier decisions from the conversation."
)


def system_prompt() -> str:
    return BASE_SYSTEM


def tool_schemas() -> list[dict[str, Any]]:
    """The tool definitions every baseline call sends beside its messages."""
    return [Tool.from_function(lookup_ticket).schema()]


def tool_call(turn: Turn) -> str:
    return json.dumps({"tool": "lookup_ticket", "arguments": {"ticket": turn.ticket}})


def turn_messages(turn: Turn) -> list[Message]:
    """One finished turn as a chat transcript."""
    return [
        {"role": "user", "content": turn.text},
        {"role": "assistant", "content": tool_call(turn)},
        {"role": "tool", "content": turn.tool_output},
        {"role": "assistant", "content": turn.answer},
    ]


def replies(turn: Turn) -> list[str]:
    """What the model writes at the request's two calls: the tool call, then the answer."""
    return [tool_call(turn), turn.answer]


def two_calls(context: list[Message], turn: Turn, system: str) -> list[list[Message]]:
    """The prompts of the request's two calls: decide the tool call, then answer."""
    first = [
        {"role": "system", "content": system},
        *context,
        {"role": "user", "content": turn.text},
    ]
    second = [
        *first,
        {"role": "assistant", "content": tool_call(turn)},
        {"role": "tool", "content": turn.tool_output},
    ]
    return [first, second]


@dataclass
class Prompted:
    """What one request cost a strategy: every call as it would be sent (messages and, where
    the strategy sends one, the reply schema), so its whole bill is counted."""

    calls: list[Sent]  # the agent's own calls; the last one answers
    extra: list[Sent] = field(default_factory=list)  # memory upkeep calls
    extra_completion_tokens: int = 0
    memory_write_calls: int = 0  # calls made only to write memory (no action, no reading)
    parts: list[Prompt] = field(default_factory=list)  # FlowState's calls as prompt parts
    completions: list[int] = field(default_factory=list)  # of each agent call, as `calls`
    replies: list[str] = field(default_factory=list)  # every call's reply, in sending order

    @classmethod
    def of(
        cls,
        prompts: Sequence[list[Message]],
        extra: Sequence[list[Message]] = (),
        replies: Sequence[str] = (),
        extra_replies: Sequence[str] = (),
        **kw: Any,
    ) -> Prompted:
        """A baseline's calls and the replies the model writes to them: the agent's calls
        send the tool definitions beside their messages, the memory upkeep's (a summariser)
        its messages alone."""
        tools = tool_schemas()
        return cls(
            [Sent(p, tools=tools) for p in prompts],
            [Sent(p) for p in extra],
            completions=[count_tokens(r) for r in replies],
            replies=[*replies, *extra_replies],
            extra_completion_tokens=sum(count_tokens(r) for r in extra_replies),
            **kw,
        )

    @property
    def prompts(self) -> list[list[Message]]:
        return [c.messages for c in self.calls]

    @property
    def extra_prompts(self) -> list[list[Message]]:
        return [c.messages for c in self.extra]

    @property
    def prompt_tokens(self) -> int:
        return sum(c.tokens() for c in self.calls + self.extra)

    @property
    def extra_prompt_tokens(self) -> int:
        return sum(c.tokens() for c in self.extra)

    @property
    def completion_tokens(self) -> int:
        """Every call's completion, memory upkeep included."""
        return sum(self.completions) + self.extra_completion_tokens

    @property
    def tokens(self) -> int:
        """The whole bill of the request: prompt plus completion."""
        return self.prompt_tokens + self.completion_tokens

    def call_completions(self) -> list[int]:
        """Completion tokens of every call in sending order (agent calls, then upkeep; the
        upkeep's completion is its last call's)."""
        agent = list(self.completions) + [0] * (len(self.calls) - len(self.completions))
        extra = [0] * len(self.extra)
        if extra:
            extra[-1] = self.extra_completion_tokens
        return agent + extra


Strategy = Callable[[Sequence[Turn]], list[Prompted]]


def full_context(turns: Sequence[Turn]) -> list[Prompted]:
    system, out = system_prompt(), []
    history: list[Message] = []
    for turn in turns:
        out.append(Prompted.of(two_calls(list(history), turn, system), replies=replies(turn)))
        history += turn_messages(turn)
    return out


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def bm25(turns: Sequence[Turn], k: int = BM25_K) -> list[Prompted]:
    from rank_bm25 import BM25Okapi

    system, out = system_prompt(), []
    docs = [" ".join(m["content"] for m in turn_messages(t)) for t in turns]
    for i, turn in enumerate(turns):
        context: list[Message] = []
        if i:
            ranker = BM25Okapi([_words(d) for d in docs[:i]])
            scores = ranker.get_scores(_words(turn.text))
            best = sorted(sorted(range(i), key=lambda j: -scores[j])[:k])  # keep time order
            context = [m for j in best for m in turn_messages(turns[j])]
        out.append(Prompted.of(two_calls(context, turn, system), replies=replies(turn)))
    return out


SUMMARISER = (
    "You maintain the compressed working state of a project assistant. Merge the new turn "
    "into the state: keep every decision (service, attribute, value, ticket), drop chatter, "
    f"stay under {SUMMARY_BUDGET_TOKENS} tokens. Reply with the new state only."
)


def _summarise(lines: list[str], turn: Turn, budget: int) -> list[str]:
    """The oracle summariser: the turn's facts first, then older lines while they fit."""
    new = [f"- {f.sentence} ({turn.ticket})" for f in turn.facts] + lines
    kept, used = [], count_tokens("Working state:")
    for line in new:
        cost = count_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return kept


def rolling_summary(turns: Sequence[Turn], budget: int = SUMMARY_BUDGET_TOKENS) -> list[Prompted]:
    system, out = system_prompt(), []
    lines: list[str] = []
    for turn in turns:
        state = "Working state:\n" + ("\n".join(lines) or "(empty)")
        prompts = two_calls([{"role": "user", "content": state}], turn, system)
        transcript = "\n".join(f"{m['role']}: {m['content']}" for m in turn_messages(turn))
        upkeep = [
            {"role": "system", "content": SUMMARISER},
            {"role": "user", "content": f"{state}\n\nNew turn:\n{transcript}"},
        ]
        lines = _summarise(lines, turn, budget)
        reply = "Working state:\n" + "\n".join(lines)
        out.append(Prompted.of(prompts, [upkeep], replies(turn), [reply], memory_write_calls=1))
    return out


BASELINES: dict[str, Strategy] = {
    "full_context": full_context,
    "bm25": bm25,
    "rolling_summary": rolling_summary,
}
