"""Running the demo scenario and measuring it against the full-history way.

The full-history figure is what an agent that replays every earlier message would send at the
same steps: the same tools, every past user message, model reply and tool result, then this
request's messages so far. Both sides are counted with the same tokenizer on real message lists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

from flowstate.api import FlowState
from flowstate.demo.scenario import REQUESTS
from flowstate.demo.tools import TripDesk
from flowstate.engine.agent import RunResult
from flowstate.engine.prompt import tools_section
from flowstate.engine.step import AgentConfig, Approval
from flowstate.llm.client import ModelClient
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


@dataclass(frozen=True)
class DemoReport:
    namespace: str
    model: str
    rows: list[RequestRow]

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

    def as_dict(self) -> dict:
        return {
            "namespace": self.namespace,
            "model": self.model,
            "requests": [asdict(r) for r in self.rows],
            "totals": {
                "prompt_tokens": self.prompt_tokens,
                "full_history_tokens": self.full_history_tokens,
                "saving": round(self.saving, 4),
            },
        }


class FullHistory:
    """The messages a replay-everything agent would accumulate, counted step by step."""

    def __init__(self, tools_text: str, model: str | None) -> None:
        self.system = {"role": "system", "content": FULL_HISTORY_SYSTEM + "\n\n" + tools_text}
        self.past: list[dict[str, str]] = []
        self.model = model

    def request(self, text: str, result: RunResult) -> int:
        """Prompt tokens of each step of this request, summed; then it joins the history."""
        current = [{"role": "user", "content": text}]
        total = 0
        for step, reply in enumerate(result.replies, start=1):
            total += count_messages([self.system, *self.past, *current], self.model)
            current.append({"role": "assistant", "content": reply})
            for obs in result.observations:
                if obs.step == step:
                    current.append(
                        {"role": "user", "content": f"Tool {obs.tool} returned: {obs.output}"}
                    )
        self.past += current
        return total


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
) -> DemoReport:
    desk = TripDesk()
    tools = desk.tools()
    agent = fs.agent(model, tools=tools, config=AgentConfig(max_steps=8), approve=approve)
    agent.on_step = on_step
    full = FullHistory(tools_section(tools), getattr(model, "model", None))
    rows: list[RequestRow] = []
    for n, text in enumerate(REQUESTS, start=1):
        on_request(n, text)
        result = agent.run(text)
        sent = sum(count_messages(p, full.model) for p in result.prompts)
        row = RequestRow(
            result.request_id,
            text,
            result.answer,
            result.outcome.value,
            result.steps,
            len(result.states_added),
            len(result.revealed),
            sent,
            full.request(text, result),
        )
        rows.append(row)
        on_done(row)
    return DemoReport(fs.namespace, getattr(model, "model", "?"), rows)
