"""FlowState on the token scenario: the real engine against Neo4j, with a scripted policy
served through litellm, plus the same engine's prompts without Progressive State Access.

The policy behaves like a careful model: at step 1 it accesses exactly the past states the
request needs (opening a collapsed request first if it has to) and reads the ticket; once the
states are revealed and the ticket is observed it records the ticket's facts, citing the
observation, and answers from the values it can read in its own prompt.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flowstate.api import FlowState
from flowstate.engine.driver import CallModel, RunTool, Start, StepDriver
from flowstate.engine.index import RenderedIndex
from flowstate.engine.prompt import INDEX, Prompt
from flowstate.engine.protocol import INDEX_ONCE
from flowstate.engine.step import AgentConfig, StepLogic
from flowstate.engine.tools import Tool
from flowstate.engine.transcript import Transcript
from flowstate.llm.client import Completion, Sent
from flowstate.llm.scripted import ScriptedModel, render, unregister
from flowstate.models import StepOutput, Usage
from flowstate.models.active import ActiveState
from flowstate.models.views import RevealedState
from flowstate.store import Store
from flowstate.tokens import count_tokens
from flowstate_bench import reader
from flowstate_bench.scenarios import Fact, Turn
from flowstate_bench.strategies import Prompted

_REQUEST = re.compile(r"# User request \(r(\d+)\)")
_STEP = re.compile(r"^Step (\d+) of \d+\.", re.M)
AGENTS = ("oracle", "reader")
NO_INDEX = "(not used: every past state is in the Active State)"


def ticket_tool(turns: Sequence[Turn]) -> Tool:
    by_ticket = {t.ticket: t.tool_output for t in turns}

    def lookup_ticket(ticket: str) -> str:
        """Read a project ticket: its description, decisions and comments."""
        return by_ticket.get(ticket, f"no ticket {ticket}")

    return Tool.from_function(lookup_ticket)


def _section(prompt: str, title: str) -> str:
    start = prompt.find(title)
    return "" if start < 0 else prompt[start : prompt.find("\n## ", start + len(title)) % 10**9]


def _step(turn: Turn, prompt: str, index_once: bool = False) -> dict[str, Any]:
    # What the answer reads must be in the prompt that answers: an index line's content is,
    # unless the index shows at the first step only; a revealed state's always is.
    kept = _section(prompt, "## Revealed past states") if index_once else prompt
    missing = [f for f in turn.needs if _value(f, kept) is None]
    listed = [f.state_id for f in missing if f"  {f.state_id} [" in prompt]
    hidden = {f"r{f.seq}" for f in missing if f"  {f.state_id} [" not in prompt}
    observed = f"r{turn.seq}.o1" in prompt
    action = None
    if not observed:
        action = {"type": "tool", "name": "lookup_ticket", "arguments": {"ticket": turn.ticket}}
    access = listed + sorted(hidden)
    if observed and not missing:
        return _final(turn, prompt)
    return {"access": access, "action": action}


def _final(turn: Turn, prompt: str) -> dict[str, Any]:
    found = [_read(f, prompt) for f in turn.needs]
    delta = [
        {
            "op": "add",
            "key": f.key,
            "category": "environment",
            "summary": f"{f.attribute} for {f.service} (settled in {turn.ticket})",
            "content": f.value,  # the summary says what it is and where it came from
            "evidence": [f"r{turn.seq}.o1"],
            # Only to a state it was shown: a reader may not have seen what the turn needs.
            "relations": [
                {"type": "DEPENDS_ON", "target": n.state_id}
                for n in turn.needs[:1]
                if re.search(rf"^(?:- |  ){re.escape(n.state_id)}\b", prompt, re.M)
            ],
        }
        for f in turn.facts
    ]
    answer = f"Recorded {turn.ticket}. " + " ".join(found)
    summary = f"Ticket {turn.ticket}: " + "; ".join(
        f"{f.attribute} {f.service}" for f in turn.facts
    )
    return {"delta": delta, "action": {"type": "final", "answer": answer, "summary": summary}}


def _read(fact: Fact, prompt: str) -> str:
    """The value as the prompt states it: the policy may only know what it was shown."""
    value = _value(fact, prompt) or "unknown"
    return f"The {fact.attribute} for {fact.service} is {value}."


def _value(fact: Fact, prompt: str) -> str | None:
    """The fact's value as a ticket, a revealed state or an index line shows it (a state's
    content is the value, its summary names the attribute and the service)."""
    said = re.search(rf"The {re.escape(fact.attribute)} for {fact.service} is (\S+?)\.", prompt)
    if said:
        return said.group(1)
    line = re.search(rf"^  {re.escape(fact.state_id)} \[\w+\] .*? content: (\S+)$", prompt, re.M)
    if line:
        return line.group(1)
    revealed = re.search(rf"^- {re.escape(fact.state_id)}\b.*\n  content: (\S+)$", prompt, re.M)
    return revealed.group(1) if revealed else None


def _index_tokens(prompt: Prompt) -> int:
    """Tokens of the index text a prompt showed, counted as the engine counts them against
    the budget."""
    return count_tokens(prompt.text(INDEX))


def _write_only(steps: list[StepOutput | None]) -> int:
    """Steps whose output only records states: no access, no action."""
    return sum(1 for o in steps if o and o.delta and not o.access and o.action is None)


class Reader:
    """The reader agent on the token scenario (`flowstate_bench.reader`): at its first step it
    opens the K shown ids that best match the request and reads the ticket; at its second it
    opens what the first made visible (the states of requests it opened) if any of it
    matches; then it answers from what it has. It never looks at what the request needs."""

    ROUNDS = 2

    def __init__(self, k: int = reader.DEFAULT_K) -> None:
        self.k = k
        self.asked: dict[int, set[str]] = {}
        self.first_seen: dict[int, set[str]] = {}

    def step(self, turn: Turn, prompt: str, index_once: bool = False) -> dict[str, Any]:
        n = int(_STEP.search(prompt).group(1))  # type: ignore[union-attr]
        asked = self.asked.setdefault(turn.seq, set())
        # A line that shows its content needs no opening while the index stays in the prompt.
        skip = asked if index_once else asked | reader.inline(prompt)
        picks = reader.choose(prompt, turn.text, self.k, skip=skip) if n <= self.ROUNDS else []
        if n == 1:
            self.first_seen[turn.seq] = set(reader.shown(prompt))
        else:  # only follow up the states listed by the requests the first step opened
            listed = reader.listed(_section(prompt, "## Opened requests"))
            picks = [p for p in picks if p in listed and p not in self.first_seen[turn.seq]]
        asked.update(picks)
        observed = f"r{turn.seq}.o1" in prompt
        if observed and not picks:
            return _final(turn, prompt)
        action = None
        if not observed:
            action = {"type": "tool", "name": "lookup_ticket", "arguments": {"ticket": turn.ticket}}
        return {"access": picks, "action": action}


def _policy(turns: Sequence[Turn], agent: str = "oracle"):
    by_seq = {t.seq: t for t in turns}
    read = Reader() if agent == "reader" else None

    def policy(messages: list[dict[str, Any]]) -> dict[str, Any]:
        prompt = messages[-1]["content"]
        seq = int(_REQUEST.search(prompt).group(1))  # type: ignore[union-attr]
        turn = by_seq[seq]
        once = INDEX_ONCE.strip() in messages[0]["content"]  # the protocol says so
        return read.step(turn, prompt, once) if read else _step(turn, prompt, once)

    return policy


@dataclass
class FlowStateRun:
    psa: list[Prompted]
    no_psa: list[Prompted]
    index_tokens: list[int]  # the largest index a prompt showed, per request
    index_budget: int
    calls: list[int]  # model calls per request
    seconds: float


def run(
    store: Store,
    turns: Sequence[Turn],
    config: AgentConfig | None = None,
    agent_kind: str = "oracle",
    with_no_psa: bool = True,
) -> FlowStateRun:
    """Run every turn through the real engine in a fresh namespace, then forget it.
    `agent_kind`: the oracle policy, or the reader (`Reader`)."""
    config = config or AgentConfig()

    name = f"bench_tokens_{uuid.uuid4().hex[:8]}"
    fs = FlowState(store, name)
    model = ScriptedModel.policy(name, _policy(turns, agent_kind))
    tool = ticket_tool(turns)
    started = time.perf_counter()
    try:
        agent = fs.agent(model.client(structured=True), tools=[tool], config=config)
        psa, index_tokens, calls = [], [], []
        for turn in turns:
            agent.on_call = seen = Transcript()
            result = agent.run(turn.text)
            if result.error or result.rejections:
                raise RuntimeError(f"{turn.ticket}: {result.error or 'rules rejected the policy'}")
            psa.append(
                Prompted(
                    [c.sent for c in seen.calls],
                    memory_write_calls=_write_only([c.completion.value for c in seen.calls]),
                    parts=[c.prompt for c in seen.calls],
                    completions=[c.completion.usage.completion_tokens for c in seen.calls],
                    replies=[c.completion.text for c in seen.calls],
                )
            )
            index_tokens.append(max(_index_tokens(c.prompt) for c in seen.calls))
            calls.append(len(result.calls))
        seconds = time.perf_counter() - started
        no_psa = without_psa(fs, turns, tool, config) if with_no_psa else []
    finally:
        unregister(name)
        fs.repository.forget_namespace(force=True)
    return FlowStateRun(psa, no_psa, index_tokens, config.index_budget_tokens, calls, seconds)


def without_psa(
    fs: FlowState, turns: Sequence[Turn], tool: Tool, config: AgentConfig
) -> list[Prompted]:
    """The engine's own prompts for the same two steps, with every past state revealed up
    front (what an Active State without Progressive State Access would carry)."""
    every = fs.reveal([f.state_id for t in turns for f in t.facts])
    logic = StepLogic([tool], config)
    text = NO_INDEX
    empty = RenderedIndex(
        text, count_tokens(text), config.index_budget_tokens, frozenset(), frozenset()
    )
    out = []
    for turn in turns:
        active = ActiveState(
            namespace=fs.namespace, request_id=f"r{turn.seq}", seq=turn.seq, text=turn.text
        )
        active.revealed = {
            r.state.id: _before(r, turn.seq) for r in every if _seq(r.state.id) < turn.seq
        }
        call = {
            "action": {
                "type": "tool",
                "name": "lookup_ticket",
                "arguments": {"ticket": turn.ticket},
            }
        }
        prompts = _two_prompts(active, empty, logic, call)
        # What the model writes at these two steps: the tool call, then the same final step
        # (its facts and answer) the oracle writes, read from this prompt.
        shown = "\n".join(m["content"] for m in prompts[1].messages())
        replies = [_text(render(call, lines=True)), _text(render(_final(turn, shown), True))]
        out.append(
            Prompted(
                [Sent(p.messages()) for p in prompts],
                parts=prompts,
                completions=[count_tokens(r) for r in replies],
                replies=replies,
            )
        )
    return out


def _text(reply: object) -> str:
    """A step the model writes as text (these steps are never native tool calls)."""
    if not isinstance(reply, str):
        raise TypeError(f"a step written as text was expected, not {reply!r}")
    return reply


def _two_prompts(
    active: ActiveState, index: RenderedIndex, logic: StepLogic, call: dict[str, Any]
) -> list[Prompt]:
    """The engine's step driver run in memory up to its second model call: the prompts of
    a step that reads the ticket and of the step that answers."""
    driver = StepDriver(active, index, logic, start=Start.INFLIGHT)
    prompts: list[Prompt] = []
    command = driver.start()
    while len(prompts) < 2:
        if isinstance(command, CallModel):
            prompts.append(command.prompt)
            outcome: object = Completion("", StepOutput.model_validate(call), Usage(calls=1))
        elif isinstance(command, RunTool):
            outcome = command.tool.call(command.arguments)
        else:  # drafts and progress: nothing to keep here
            outcome = None
        command = driver.send(outcome)
    return prompts


def _seq(any_id: str) -> int:
    return int(any_id.split(".", 1)[0][1:])


def _before(rev: RevealedState, seq: int) -> RevealedState:
    """The state as it looked at request `seq`: relations to later states did not exist yet."""
    kept = [r for r in rev.relations if _seq(r.other) < seq]
    return rev.model_copy(update={"relations": kept})
