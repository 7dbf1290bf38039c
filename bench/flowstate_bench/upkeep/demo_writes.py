"""What FlowState writes on the demo's requests, read from a demo run, and what that costs.

The demo's scripted FlowState agent runs the eight requests in a fresh namespace (forgotten
afterwards). From each request's replies come:

- the facts it stores: each ADD (key, category, summary, content, relations) and the
  request's SUMMARY, which the Mem0 and Graphiti scripts then extract, no more and no less;
- its upkeep: the completion lines that write memory (ADD, UPDATE, REMOVE, SUMMARY lines),
  and, on every call, the part of the protocol that describes writing (the ADD, UPDATE,
  REMOVE and SUMMARY lines, the all-or-none line and the vocabulary line), all counted with
  `flowstate.tokens`;
- the conversation turn a memory system ingests: the request's text and the answer.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from flowstate.api import FlowState
from flowstate.demo.scenario import REQUESTS, scripted_policy
from flowstate.demo.tools import TripDesk
from flowstate.engine.agent import AgentConfig
from flowstate.engine.prompt import PROTOCOL
from flowstate.engine.transcript import Transcript
from flowstate.llm.scripted import ScriptedModel
from flowstate.llm.step_lines import parse_step_reply
from flowstate.models.step import AddOp, FinalAnswer
from flowstate.store import Repository, Store
from flowstate.tokens import count_tokens
from flowstate_bench.upkeep.endpoint import BILLED_AS

WRITE_KEYWORDS = ("ADD", "UPDATE", "REMOVE", "SUMMARY")
# Protocol lines about writing besides the keyword lines: the all-or-none rule (which says how
# past states are replaced) and the vocabulary of categories and relation types.
WRITE_RULES = ("Changes apply", "category:")


@dataclass(frozen=True)
class Fact:
    """One state FlowState stores: what the memory systems' scripts extract for it."""

    key: str
    category: str
    summary: str
    content: str
    relations: tuple[tuple[str, str], ...] = ()

    @property
    def text(self) -> str:
        """The fact as one statement: key, summary and every detail of the content."""
        return f"{self.key.replace('_', ' ')}: {self.summary}. {self.content}"


@dataclass(frozen=True)
class RequestWrites:
    """One demo request: the turn a memory ingests, FlowState's facts and its upkeep."""

    request_id: str
    text: str
    answer: str
    summary: str
    facts: tuple[Fact, ...]
    write_lines: tuple[str, ...]  # the completion lines that write memory, as the model wrote
    calls: int
    protocol_write_tokens: int  # the writing part of the protocol, summed over the calls
    write_line_tokens: int = field(default=0)

    @property
    def upkeep_tokens(self) -> int:
        return self.write_line_tokens + self.protocol_write_tokens

    @property
    def turn(self) -> list[dict[str, str]]:
        return [
            {"role": "user", "content": self.text},
            {"role": "assistant", "content": self.answer},
        ]


def write_lines(reply: str) -> list[str]:
    """The lines of a reply that write memory."""
    return [ln for ln in reply.splitlines() if ln.split(" ", 1)[0] in WRITE_KEYWORDS]


def protocol_writing(protocol: str) -> str:
    """The part of the protocol that describes writing memory."""
    lines = [
        ln
        for ln in protocol.splitlines()
        if ln.split(" ", 1)[0] in WRITE_KEYWORDS or ln.startswith(WRITE_RULES)
    ]
    if not lines:
        raise ValueError("the protocol has no ADD line: the upkeep bench reads the lines format")
    return "\n".join(lines)


def facts_of(reply: str) -> tuple[list[Fact], str]:
    """The ADDs of one reply as facts, and its SUMMARY ('' if none)."""
    step = parse_step_reply(reply).value
    if step is None:
        return [], ""
    facts = [
        Fact(
            op.key,
            op.category.value,
            op.summary,
            op.content,
            tuple((r.type.value, r.target) for r in op.relations),
        )  # fmt: skip
        for op in step.delta
        if isinstance(op, AddOp)
    ]
    summary = step.action.summary if isinstance(step.action, FinalAnswer) else ""
    return facts, summary


def demo_writes(store: Store, requests: int = len(REQUESTS)) -> list[RequestWrites]:
    """Run the demo's first `requests` requests with its scripted model in a namespace of its
    own, and read what FlowState wrote; the namespace is forgotten at the end."""
    namespace = f"bench_upkeep_{uuid.uuid4().hex[:12]}"
    out: list[RequestWrites] = []
    try:
        with ScriptedModel.policy(f"upkeep-demo-{namespace}", scripted_policy) as model:
            fs = FlowState(store, namespace)
            # The demo approves its booking as `flowstate demo` does.
            agent = fs.agent(
                model.client(),
                tools=TripDesk().tools(),
                config=AgentConfig(max_steps=8),
                approve=lambda asked: True,
            )
            agent.on_call = transcript = Transcript()
            for text in REQUESTS[:requests]:
                transcript.clear()
                result = agent.run(text)
                out.append(_request(result.request_id, text, result.answer or "", transcript))
    finally:
        Repository(store, namespace).forget_namespace(force=True)
    return out


def _request(request_id: str, text: str, answer: str, transcript: Transcript) -> RequestWrites:
    facts: list[Fact] = []
    lines: list[str] = []
    summary = ""
    protocol_tokens = 0
    for call in transcript.calls:
        reply = call.completion.text or ""
        found, said = facts_of(reply)
        facts += found
        summary = said or summary
        lines += write_lines(reply)
        protocol = call.prompt.text(PROTOCOL)
        if protocol:
            protocol_tokens += count_tokens(protocol_writing(protocol), BILLED_AS)
    return RequestWrites(
        request_id,
        text,
        answer,
        summary,
        tuple(facts),
        tuple(lines),
        len(transcript.calls),
        protocol_tokens,
        sum(count_tokens(ln + "\n", BILLED_AS) for ln in lines),
    )
