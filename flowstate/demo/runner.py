"""Running the demo scenario and measuring it against the full-history way.

The full-history figure is what an agent that replays every earlier message would send at the
same steps: the same tools, every past user message, model reply and tool result, then this
request's messages so far. Both sides are counted with the same tokenizer on real message lists.
A stricter "lean" figure is kept beside it (see `FullHistory`), and FlowState's tokens are
split into the prompt's parts, with the share of each call a provider's prompt cache can reuse.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from flowstate.api import FlowState
from flowstate.demo.scenario import REQUESTS
from flowstate.demo.tools import TripDesk
from flowstate.engine.agent import RunResult
from flowstate.engine.prompt_costs import PARTS, prefix_shares, total_parts
from flowstate.engine.step import AgentConfig, Approval
from flowstate.engine.tool_text import tools_text
from flowstate.engine.transcript import Transcript
from flowstate.llm.client import ModelClient
from flowstate.llm.step_lines import parse_step_reply
from flowstate.models.active import ActiveState
from flowstate.tokens import count_messages

FULL_HISTORY_SYSTEM = (
    "You are a travel assistant. The whole conversation so far follows. At every step reply "
    'with JSON: {"action": {"type": "tool", "name": ..., "arguments": {...}} or '
    '{"type": "final", "answer": ...}}.'
)


@dataclass(frozen=True)
class RequestRow:
    request_id: str
    text: str
    answer: str
    outcome: str
    steps: int
    states_added: int
    revealed: int
    prompt_tokens: int
    full_history_tokens: int
    lean_full_history_tokens: int  # the stricter baseline: see FullHistory
    parts: dict[str, int]  # prompt tokens by part, summed over the request's calls


@dataclass(frozen=True)
class DemoReport:
    namespace: str
    model: str
    rows: list[RequestRow]
    prefix_share: float  # mean share of a call's prompt repeating the previous call's

    @property
    def parts(self) -> dict[str, int]:
        return {p: sum(r.parts[p] for r in self.rows) for p in PARTS}

    @property
    def first_request_ratio(self) -> float:
        """The first request's prompt tokens over the full-history way's."""
        first = self.rows[0]
        return first.prompt_tokens / first.full_history_tokens if first.full_history_tokens else 0

    @property
    def prompt_tokens(self) -> int:
        return sum(r.prompt_tokens for r in self.rows)

    @property
    def full_history_tokens(self) -> int:
        return sum(r.full_history_tokens for r in self.rows)

    @property
    def saving(self) -> float:
        full = self.full_history_tokens
        return 1 - self.prompt_tokens / full if full else 0.0

    @property
    def lean_saving(self) -> float:
        lean = sum(r.lean_full_history_tokens for r in self.rows)
        return 1 - self.prompt_tokens / lean if lean else 0.0

    def as_dict(self) -> dict:
        return {
            "namespace": self.namespace,
            "model": self.model,
            "requests": [asdict(r) for r in self.rows],
            "totals": {
                "prompt_tokens": self.prompt_tokens,
                "full_history_tokens": self.full_history_tokens,
                "saving": round(self.saving, 4),
                "lean_full_history_tokens": sum(r.lean_full_history_tokens for r in self.rows),
                "lean_saving": round(self.lean_saving, 4),
                "first_request_ratio": round(self.first_request_ratio, 4),
                "prefix_share": round(self.prefix_share, 4),
                "parts": self.parts,
            },
        }


class FullHistory:
    """The messages a replay-everything agent would accumulate, counted step by step.

    By default it is charged at FlowState's steps with FlowState's replies. `lean=True` is the
    stricter comparison: a replay agent calls the model only where FlowState acted (a tool call
    or the answer), never for a step that waited for memory to open, and its replies are those
    actions alone, without FlowState's memory deltas.
    """

    def __init__(self, tools_text: str, model: str | None, lean: bool = False) -> None:
        self.system = {"role": "system", "content": FULL_HISTORY_SYSTEM + "\n\n" + tools_text}
        self.past: list[dict[str, str]] = []
        self.model = model
        self.lean = lean

    def request(self, text: str, result: RunResult, replies: list[str]) -> int:
        """Prompt tokens of each step of this request (its model `replies` in order), summed;
        then it joins the history."""
        current = [{"role": "user", "content": text}]
        total = 0
        for step, reply in enumerate(replies, start=1):
            said = _action(reply) if self.lean else reply
            if said is None:
                continue
            total += count_messages([self.system, *self.past, *current], self.model)
            current.append({"role": "assistant", "content": said})
            for obs in result.observations:
                if obs.step == step:
                    current.append(
                        {"role": "user", "content": f"Tool {obs.tool} returned: {obs.output}"}
                    )
        self.past += current
        return total


def _action(reply: str) -> str | None:
    """The reply's action as the replay agent would write it; None for a step without one."""
    step = parse_step_reply(reply).value
    if step is None:
        return reply  # unusable: the replay agent is charged for the same text
    if step.action is None:
        return None
    return json.dumps({"action": step.action.model_dump(mode="json")}, ensure_ascii=False)


def auto_approve(asked: Approval) -> bool:
    """The demo's approver: it approves and the progress display says so."""
    return True


def run_demo(
    fs: FlowState,
    model: ModelClient,
    on_request: Callable[[int, str], None] = lambda n, text: None,
    on_done: Callable[[RequestRow], None] = lambda row: None,
    approve: Callable[[Approval], bool] = auto_approve,
    on_step: Callable[[ActiveState], None] | None = None,
    config: AgentConfig | None = None,
) -> DemoReport:
    desk = TripDesk()
    tools = desk.tools()
    config = config or AgentConfig(max_steps=8)
    agent = fs.agent(model, tools=tools, config=config, approve=approve)
    agent.on_step = on_step
    agent.on_call = transcript = Transcript()
    full = FullHistory(tools_text(tools), getattr(model, "model", None))
    lean = FullHistory(tools_text(tools), full.model, lean=True)
    rows: list[RequestRow] = []
    sent_calls = []
    for n, text in enumerate(REQUESTS, start=1):
        on_request(n, text)
        transcript.clear()
        result = agent.run(text)
        # The whole bill of every call, as it reached litellm (messages and any schema).
        sent = sum(c.sent.tokens(full.model) for c in transcript.calls)
        sent_calls += [c.sent for c in transcript.calls]
        row = RequestRow(
            result.request_id,
            text,
            result.answer,
            result.outcome.value,
            result.steps,
            len(result.states_added),
            len(result.revealed),
            sent,
            full.request(text, result, transcript.replies),
            lean.request(text, result, transcript.replies),
            total_parts(((c.prompt, c.sent) for c in transcript.calls), full.model),
        )
        rows.append(row)
        on_done(row)
    shares = prefix_shares(sent_calls, full.model)
    mean_share = sum(shares) / len(shares) if shares else 0.0
    return DemoReport(fs.namespace, getattr(model, "model", "?"), rows, mean_share)
