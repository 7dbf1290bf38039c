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
from flowstate_bench.seam import NO_PSA_BLOCK

Message = dict[str, Any]
Style = Literal["flowstate", "loop"]
SUMMARY_TAIL = 1_500
MEMORY_BLOCK = re.compile(r"<memory_context>.*?</memory_context>", re.DOTALL)


def state_summary(tid: str, k: int) -> str:
    return f"Subtask {k} of task {tid}: result recorded"


class ScriptedAgent:
    """One task's scripted agent; the runner calls `begin(k)` before each subtask (k = 0 is
    FlowState's base request)."""

    def __init__(self, name: str, env: TaskEnv, style: Style, forgetful: bool) -> None:
        self.env, self.style, self.forgetful = env, style, forgetful
        self.model = ScriptedModel.policy(name, self._reply)
        self.found: dict[int, bool] = {}  # subtask -> were its facts all shown
        self.begin(0)

    def client(self) -> LiteLLMClient:
        return self.model.client()

    def close(self) -> None:
        unregister(self.model.name)

    def begin(self, k: int) -> None:
        self.k, self.done, self.good = k, 0, None
        self.accessed: set[str] = set()

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
                    return {"access": wanted, "action": None}
            self.good = shown or not facts
            if facts:
                self.found[self.k] = shown
        call = self.env.next_call(self.k, self.good, text, self.done)
        if call is not None:
            self.done += 1
            action = {"type": "tool", **call}
            return {"action": action} if self.style == "flowstate" else action
        answer = self.env.final(self.k, self.good, text)
        return self._finish(self.env.note(self.k, answer), answer)

    def _to_access(self, text: str, sources: set[int]) -> list[str]:
        tid = re.escape(self.env.task.id)
        wanted = []
        for j in sorted(sources):
            ids = re.findall(rf"(r\d+\.\S+) \[\w+\] Subtask {j} of task {tid}:", text)
            wanted += [i for i in ids[-1:] if i not in self.accessed]
        return wanted

    def _finish(self, content: str, answer: str) -> dict[str, Any]:
        if self.style == "loop":
            return {"type": "final", "answer": answer}
        summary = state_summary(self.env.task.id, self.k)
        delta = [
            {
                "op": "add",
                "key": f"subtask_{self.k}",
                "category": "artifact",
                "summary": summary,
                "content": content[:19_000] or answer or "(empty)",
            }
        ]
        return {"delta": delta, "action": {"type": "final", "answer": answer, "summary": summary}}


def _summarise(text: str) -> str:
    """The scripted summariser keeps its previous summary and the tail of the latest session
    (where each config's chunks end with the result)."""
    previous = text.split("# Summary so far\n", 1)[-1].split("\n\n# Latest session\n", 1)
    old = previous[0].strip()
    latest = previous[1] if len(previous) > 1 else ""
    keep = [] if old == "(none)" else [old]
    return "\n".join([*keep, latest[-SUMMARY_TAIL:]])
