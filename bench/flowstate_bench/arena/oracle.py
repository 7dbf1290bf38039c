"""The offline agents, served through litellm (`ScriptedModel.policy`) so they drive the real
FlowState engine and the real baseline loop.

ORACLE answers subtask k with the gold result only when every fact k needs is in what it was
shown: the prompt (memory context included) or, under FlowState, states it opened. Otherwise it
behaves as FORGETFUL, which never reads memory: it takes the forgetful path of every subtask
that needs facts. So the oracle measures whether a strategy's memory delivers the facts, and
`found` records, per subtask, whether it did.

Under FlowState the oracle records each result as a state (`Subtask k of task T`) and, when
facts are missing, opens the states of the subtasks they come from before acting.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from flowstate.llm.client import LiteLLMClient
from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate_bench.arena.data import normalise
from flowstate_bench.arena.domain import TaskEnv, needed_facts
from flowstate_bench.arena.memories import SUMMARY_SYSTEM
from flowstate_bench.reader import Opener
from flowstate_bench.seam import NO_PSA_BLOCK

Message = dict[str, Any]
Style = Literal["flowstate", "loop"]
SUMMARY_TAIL = 1_500
MEMORY_BLOCK = re.compile(r"<memory_context>.*?</memory_context>", re.DOTALL)
SUMMARY_CHARS = 190
_REQUEST = re.compile(r"# User request \(r\d+\)\n(.*?)(?=\n# |\Z)", re.DOTALL)


def _request(text: str) -> str:
    """The request section of a FlowState prompt: what the reader matches the index on."""
    found = _REQUEST.findall(text)
    return found[-1] if found else text


def state_summary(tid: str, k: int, subject: str = "") -> str:
    """What the oracle writes as a state's one-line summary: which subtask, and what it was
    about, as a model summarises its work (the subtask's own words; never the result the
    later subtasks need, which stays in the content)."""
    head = f"Subtask {k} of task {tid}:"
    return f"{head} {' '.join(subject.split())}"[:SUMMARY_CHARS] if subject else head + " done"


def subject(env: TaskEnv, k: int) -> str:
    """Subtask k's subject: the first line of its own section of the question (shopping's
    `Product k: Select ...`, a traveler's request, a formal question); k = 0: the base."""
    if k == 0:
        return "the base traveler and plan of the group trip"
    question = env.task.questions[k - 1]
    at = question.find(f"Product {k}:")
    section = question[at:] if at >= 0 else question
    return section.strip().split("\n", 1)[0]


class ScriptedAgent:
    """One task's scripted agent; the runner calls `begin(k)` before each subtask (k = 0 is
    FlowState's base request).

    `reader`: under FlowState what it opens comes only from the prompt text, ranked by
    lexical match with the subtask's prompt (`flowstate_bench.reader`); its actions stay the
    oracle's given what it opened. `one_step`: when it opens states and its next tool call does
    not need them (shopping's search, travel's first searches), it makes that call in the same
    step, as the protocol says; else it waits a step for the content."""

    def __init__(
        self,
        name: str,
        env: TaskEnv,
        style: Style,
        forgetful: bool,
        reader: bool = False,
        one_step: bool = True,
    ) -> None:
        self.env, self.style, self.forgetful = env, style, forgetful
        self.reader = Opener() if reader else None
        self.one_step = one_step
        self.model = ScriptedModel.policy(name, self._reply)
        self.found: dict[int, bool] = {}  # subtask -> were its facts all shown
        self.begin(0)

    def client(self) -> LiteLLMClient:
        return self.model.client()

    def close(self) -> None:
        unregister(self.model.name)

    def begin(self, k: int) -> None:
        self.k, self.done = k, 0
        self.good: bool | None = None  # whether the memory showed what this subtask needs
        self.accessed: set[str] = set()
        self.pending: dict[str, Any] | None = None
        if self.reader is not None:
            self.reader.reset()

    def _reply(self, messages: list[Message]) -> dict[str, Any]:
        text = "\n".join(str(m.get("content", "")) for m in messages)
        if self.forgetful:  # it never reads memory, only the prompt and this session
            text = NO_PSA_BLOCK.sub("", MEMORY_BLOCK.sub("", text))
        if messages and SUMMARY_SYSTEM in str(messages[0].get("content", "")):
            return {"summary": _summarise(text)}
        if self.k == 0:
            return self._finish(self.env.base_request() or "", "Noted the base trip.")
        if self.good is None:
            facts = needed_facts(self.env, self.k)
            shown = not self.forgetful and all(normalise(f.text) in normalise(text) for f in facts)
            if not shown and not self.forgetful and self.style == "flowstate":
                wanted = self._to_access(text, {f.source for f in facts})
                if wanted:
                    self.accessed.update(wanted)
                    return {"access": wanted, "action": self._meanwhile(text)}
            self.good = shown or not facts
            if facts:
                self.found[self.k] = shown
        if self.pending is not None:  # made in the access step, before the content was in
            self.done += 1
            self.pending = None
        call = self.env.next_call(self.k, self.good, text, self.done)
        if call is not None:
            self.done += 1
            action = {"type": "tool", **call}
            return {"action": action} if self.style == "flowstate" else action
        answer = self.env.final(self.k, self.good, text)
        return self._finish(self.env.note(self.k, answer), answer)

    def _meanwhile(self, text: str) -> dict[str, Any] | None:
        """The tool call to make while the states open, when it is the same on the gold and
        the forgetful path (so it does not need them); None: wait."""
        if not self.one_step or self.pending is not None:
            return None
        gold = self.env.next_call(self.k, True, text, self.done)
        if gold is None or gold != self.env.next_call(self.k, False, text, self.done):
            return None
        self.pending = gold
        return {"type": "tool", **gold}

    def _to_access(self, text: str, sources: set[int]) -> list[str]:
        if self.reader is not None:
            return self.reader.pick(text, _request(text))
        tid = re.escape(self.env.task.id)
        wanted = []
        for j in sorted(sources):
            ids = re.findall(rf"(r\d+\.\S+) \[\w+\] Subtask {j} of task {tid}:", text)
            wanted += [i for i in ids[-1:] if i not in self.accessed]
        return wanted

    def _finish(self, content: str, answer: str) -> dict[str, Any]:
        if self.style == "loop":
            return {"type": "final", "answer": answer}
        summary = state_summary(self.env.task.id, self.k, subject(self.env, self.k))
        delta = [
            {
                "op": "add",
                "key": f"subtask_{self.k}",
                "category": "artifact",
                "summary": summary,
                "content": content[:19_000] or answer or "(empty)",
            }
        ]
        # No SUMMARY: the request's one state says what it did (the engine takes its summary).
        return {"delta": delta, "action": {"type": "final", "answer": answer}}


def _summarise(text: str) -> str:
    """The scripted summariser keeps its previous summary and the tail of the latest session
    (where each config's chunks end with the result)."""
    previous = text.split("# Summary so far\n", 1)[-1].split("\n\n# Latest session\n", 1)
    old = previous[0].strip()
    latest = previous[1] if len(previous) > 1 else ""
    keep = [] if old == "(none)" else [old]
    return "\n".join([*keep, latest[-SUMMARY_TAIL:]])
