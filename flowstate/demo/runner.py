"""Running the demo scenario with FlowState and with the agent a user would run instead.

Both agents get the same requests and the same tools and give the same answers. FlowState
runs its own loop; the plain agent (`flowstate.demo.plain`) calls the model through litellm's
native tool calling with the whole history in every prompt. Each side's whole bill is what
reached litellm: every prompt (messages, reply schema, tool definitions as sent) and every
completion, counted with the same tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from flowstate.api import FlowState
from flowstate.demo.plain import PlainAgent
from flowstate.demo.scenario import REQUESTS
from flowstate.demo.tools import TripDesk
from flowstate.demo.view import parse
from flowstate.engine.prompt import REJECTIONS
from flowstate.engine.prompt_costs import PARTS, cached_per_call, prefix_shares, total_parts
from flowstate.engine.step import AgentConfig, Approval
from flowstate.engine.transcript import Transcript
from flowstate.llm.client import ModelClient, Sent
from flowstate.models.active import ActiveState
from flowstate.tokens import count_tokens


@dataclass(frozen=True)
class Bill:
    """Tokens one agent was billed for: prompt (input) and completion (output)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt, what a provider's cache would serve

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def cached_at(self, rate: float) -> float:
        """The bill in tokens with cached input read at `rate` of the price (0.1: 10%)."""
        return self.tokens - self.cached_tokens * (1 - rate)

    def __add__(self, other: Bill) -> Bill:
        return Bill(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
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
    waits: int  # FlowState calls that only opened memory, with no action
    flowstate: Bill
    plain: Bill
    plain_answer: str
    prefetched: list[str]  # past states opened before the first call
    used: list[str]  # past states whose content the scripted planner read
    parts: dict[str, int]  # FlowState's prompt tokens by part, summed over its calls
    # Per FlowState call, "ok" when the model followed the protocol, else what went wrong.
    protocol: list[str] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return self.flowstate.tokens / self.plain.tokens if self.plain.tokens else 0.0


@dataclass(frozen=True)
class DemoReport:
    namespace: str
    model: str
    rows: list[RequestRow]
    prefix_share: float  # mean share of a call's prompt repeating the previous call's
    scripted: bool = field(default=False)

    @property
    def flowstate(self) -> Bill:
        return sum((r.flowstate for r in self.rows), Bill())

    @property
    def plain(self) -> Bill:
        return sum((r.plain for r in self.rows), Bill())

    @property
    def ratio(self) -> float:
        """FlowState's whole bill over the plain agent's (prompt plus completion)."""
        return self.flowstate.tokens / self.plain.tokens if self.plain.tokens else 0.0

    @property
    def first_request_ratio(self) -> float:
        return self.rows[0].ratio if self.rows else 0.0

    @property
    def parts(self) -> dict[str, int]:
        return {p: sum(r.parts[p] for r in self.rows) for p in PARTS}

    @property
    def prefetch(self) -> dict[str, float | int]:
        """Precision and recall of the prefetch against what the planner read (scripted)."""
        fetched = sum(len(r.prefetched) for r in self.rows)
        used = sum(len(r.used) for r in self.rows)
        hits = sum(len(set(r.prefetched) & set(r.used)) for r in self.rows)
        return {
            "prefetched": fetched,
            "used": used,
            "precision": round(hits / fetched, 4) if fetched else 1.0,
            "recall": round(hits / used, 4) if used else 1.0,
        }

    def as_dict(self) -> dict:
        def bill(b: Bill) -> dict[str, int]:
            return {
                "calls": b.calls,
                "prompt_tokens": b.prompt_tokens,
                "completion_tokens": b.completion_tokens,
                "tokens": b.tokens,
                "cached_tokens": b.cached_tokens,
                **{f"tokens_cached_at_{r:.0%}": round(b.cached_at(r)) for r in CACHE_RATES},
            }

        return {
            "namespace": self.namespace,
            "model": self.model,
            "requests": [
                asdict(r) | {"flowstate": bill(r.flowstate), "plain": bill(r.plain)}
                for r in self.rows
            ],
            "totals": {
                "flowstate": bill(self.flowstate),
                "plain": bill(self.plain),
                "ratio": round(self.ratio, 4),
                **{
                    f"ratio_cached_at_{r:.0%}": round(
                        self.flowstate.cached_at(r) / self.plain.cached_at(r), 4
                    )
                    for r in CACHE_RATES
                    if self.plain.tokens
                },
                "first_request_ratio": round(self.first_request_ratio, 4),
                "cost_usd": {
                    model: {
                        "flowstate": price(model, self.flowstate),
                        "plain": price(model, self.plain),
                    }
                    for model in PRICED_AS
                },
                "waits": sum(r.waits for r in self.rows),
                "prefetch": self.prefetch,
                "prefix_share": round(self.prefix_share, 4),
                "parts": self.parts,
            },
        }


CACHE_RATES = (0.1, 0.5)  # cached input at 10% and 50% of the input price
PRICED_AS = ("gpt-4o-mini", "gpt-4o")  # a small and a large model of litellm's price map


def price(model: str, bill: Bill) -> float | None:
    """What `bill` costs in USD at `model`'s list prices in litellm's map, without caching
    (None when litellm does not price the model)."""
    from flowstate.llm import load_litellm

    try:
        prompt, completion = load_litellm().cost_per_token(
            model=model,
            prompt_tokens=bill.prompt_tokens,
            completion_tokens=bill.completion_tokens,
        )
    except Exception:
        return None
    return round(float(prompt) + float(completion), 6)


def auto_approve(asked: Approval) -> bool:
    """The demo's approver: it approves and the progress display says so."""
    return True


def run_demo(
    fs: FlowState,
    model: ModelClient,
    plain_model: str,
    on_request: Callable[[int, str], None] = lambda n, text: None,
    on_done: Callable[[RequestRow], None] = lambda row: None,
    approve: Callable[[Approval], bool] = auto_approve,
    on_step: Callable[[ActiveState], None] | None = None,
    config: AgentConfig | None = None,
    used: Callable[[str], set[str]] = lambda request_id: set(),
) -> DemoReport:
    """Both agents over the demo's requests; `plain_model` is the plain agent's litellm
    model, `used(request_id)` what the scripted planner read (empty for a real model)."""
    config = config or AgentConfig(max_steps=8)
    agent = fs.agent(model, tools=TripDesk().tools(), config=config, approve=approve)
    agent.on_step = on_step
    agent.on_call = transcript = Transcript()
    counted_as = getattr(model, "model", None)
    plain = PlainAgent(plain_model, TripDesk().tools())
    rows: list[RequestRow] = []
    sent_calls: list[Sent] = []
    plain_calls: list[Sent] = []
    for n, text in enumerate(REQUESTS, start=1):
        on_request(n, text)
        transcript.clear()
        result = agent.run(text)
        calls = transcript.calls
        cached = _cached(sent_calls, [c.sent for c in calls], counted_as)
        steps = [c.completion.value for c in calls]
        other = plain.run(text)
        plain_cached = _cached(plain_calls, other.sent, counted_as)
        rows.append(
            row := RequestRow(
                request_id=result.request_id,
                text=text,
                answer=result.answer,
                outcome=result.outcome.value,
                steps=result.steps,
                states_added=len(result.states_added),
                revealed=len(result.revealed),
                waits=sum(1 for s in steps if s is not None and s.action is None),
                flowstate=Bill(
                    len(calls),
                    sum(c.sent.tokens(counted_as) for c in calls),
                    # The reply's text, by the tokenizer the prompts are counted with: a real
                    # provider's usage is another tokenizer's figure.
                    sum(count_tokens(c.completion.text, counted_as) for c in calls),
                    cached,
                ),
                plain=Bill(
                    other.calls,
                    sum(other.prompt_tokens),
                    sum(other.completion_tokens),
                    plain_cached,
                ),
                plain_answer=other.answer,
                prefetched=_prefetched(transcript),
                used=sorted(used(result.request_id)),
                parts=total_parts(((c.prompt, c.sent) for c in calls), counted_as),
                protocol=_followed(transcript),
            )
        )
        on_done(row)
    shares = prefix_shares(sent_calls, counted_as)
    mean_share = sum(shares) / len(shares) if shares else 0.0
    return DemoReport(fs.namespace, getattr(model, "model", "?"), rows, mean_share)


def _cached(earlier: list[Sent], new: list[Sent], model: str | None) -> int:
    """Tokens of the `new` calls a provider's cache would serve, each call following the one
    before it (the last of `earlier` first); `new` joins `earlier`."""
    served = cached_per_call([*earlier[-1:], *new], model)[1 if earlier else 0 :]
    earlier += new
    return sum(served)


def _followed(transcript: Transcript) -> list[str]:
    """Per call: "ok" when its reply was read and nothing of it was refused, else why not
    (a refusal is what the next call's prompt tells the model)."""
    out = []
    calls = transcript.calls
    for call, after in zip(calls, [*calls[1:], None], strict=True):
        refused = after.prompt.text(REJECTIONS) if after is not None else ""
        out.append(call.completion.error or refused or "ok")
    return out


def _prefetched(transcript: Transcript) -> list[str]:
    """The past states the first call already showed revealed: the prefetch's."""
    if not transcript.calls:
        return []
    try:
        return sorted(parse(transcript.calls[0].sent.messages).revealed)
    except ValueError:  # a prompt the demo's reader does not know (a processor rewrote it)
        return []


def run_scripted_demo(fs: FlowState, name: str = "flowstate-demo", **kwargs: Any) -> DemoReport:
    """The demo with its scripted models, served under `name` and `name`-plain while it runs
    (other keyword arguments go to `run_demo`)."""
    from flowstate.demo.plain_script import plain_policy
    from flowstate.demo.scenario import ScriptedPlanner
    from flowstate.llm.scripted import ScriptedModel

    planner = ScriptedPlanner()
    with (
        ScriptedModel.policy(name, planner) as model,
        ScriptedModel.policy(f"{name}-plain", plain_policy) as plain,
    ):
        return run_demo(
            fs,
            model.client(),
            plain.model,
            used=lambda request_id: planner.used.get(request_id, set()),
            **kwargs,
        )
