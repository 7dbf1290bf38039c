"""The scripted model behind the memories' own LLM calls in offline runs: a judge, a memory-item
extractor, a fact extractor and an update decider, answering through litellm
(`ScriptedModel.policy`) like the scripted agents.

Each reads its prompt and applies a fixed rule, a stand-in for a careful model:

- judge: failure when the trajectory shows an error or an apology, else success;
- extractor (ReasoningBank): the last 3 fact-bearing lines of the trajectory, one item each;
- fact extractor (Mem0): every fact-bearing line of the new messages, verbatim (at most 12);
- update decider (Mem0): NONE for a fact already stored verbatim; UPDATE only when the new fact
  restates a stored memory's attribute with a fuller value (same key before the first colon,
  and the new text extends the stored one), so no information is lost; ADD otherwise (two
  `Purchase #1: ...` or `## solution: ...` lines from different subtasks are both kept: a rule
  cannot tell they are different subjects, and overwriting would destroy one); never DELETE.

A line is fact-bearing when it holds a digit or a `key: value` pair: ids, amounts, plans and
purchases are. So these stand-ins keep concrete results that a real extractor may generalise
away; their recall is an upper bound for the real systems', as the scripted summariser's is.
"""

from __future__ import annotations

import json
import re
from typing import Any

from flowstate.llm.client import LiteLLMClient
from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate_bench.baselines import EXTRACT_SYSTEM, FACTS_SYSTEM, JUDGE_SYSTEM, UPDATE_SYSTEM

Message = dict[str, Any]
MAX_FACTS = 12
FAILED = re.compile(r"\[error\]|unusable reply|i'm sorry|no purchase", re.IGNORECASE)
_FACTUAL = re.compile(r"\d|\w: \S")


def fact_lines(text: str) -> list[str]:
    """The fact-bearing lines of `text` (JSON-escaped newlines count as line breaks)."""
    lines = re.split(r"\n|\\n", text)
    # Facts are kept whole: the memory stores any length, and a cut would break long plan lines.
    out = [ln.strip() for ln in lines if _FACTUAL.search(ln)]
    return list(dict.fromkeys(ln for ln in out if ln))


def _head(text: str) -> str:
    return text.split(":", 1)[0].strip().lower() if ":" in text else ""


def _extends(new: str, stored: str) -> bool:
    """The new fact restates the stored one with more: same attribute, a fuller value."""
    return new != stored and new.startswith(stored)


def memory_policy(messages: list[Message]) -> dict[str, Any]:
    system = str(messages[0].get("content", "")) if messages else ""
    text = str(messages[-1].get("content", "")) if messages else ""
    if JUDGE_SYSTEM in system:
        failed = bool(FAILED.search(text))
        return {"success": not failed, "reason": "error seen" if failed else "request handled"}
    if EXTRACT_SYSTEM in system:
        trajectory = text.split("# Trajectory\n", 1)[-1]
        lines = fact_lines(trajectory)[-3:]
        items = [
            {"title": f"Result {i}", "description": "from the trajectory", "content": ln}
            for i, ln in enumerate(lines, 1)
        ]
        return {"items": items}
    if FACTS_SYSTEM in system:
        said = text.removesuffix("\nassistant: thanks, noted").removeprefix("user: ")
        return {"facts": fact_lines(said)[-MAX_FACTS:]}
    if UPDATE_SYSTEM in system:
        return {"memory": _decide(text)}
    raise ValueError("not a memory prompt")


def _decide(prompt: str) -> list[dict[str, str]]:
    old_part, new_part = prompt.split("\n\n# New facts\n", 1)
    old = json.loads(old_part.removeprefix("# Existing memories\n"))
    events = []
    for fact in json.loads(new_part):
        same = next((m for m in old if m["text"] == fact), None)
        head = _head(fact)
        related = next(
            (m for m in old if head and _head(m["text"]) == head and _extends(fact, m["text"])),
            None,
        )
        if same is not None:
            events.append({"id": same["id"], "text": fact, "event": "NONE"})
        elif related is not None:
            events.append({"id": related["id"], "text": fact, "event": "UPDATE"})
        else:
            events.append({"id": "new", "text": fact, "event": "ADD"})
    return events


def scripted_memory_model(name: str) -> ScriptedModel:
    """Register the policy under `name` (`flowstate-scripted/<name>`)."""
    return ScriptedModel.policy(name, memory_policy)


class MemoryClients:
    """Where a run's memories get their model: `memory_model`, else the agent's model (llm
    agents), else a scripted memory model registered on first use and dropped by `close`."""

    def __init__(
        self, memory_model: str | None, agent: str, model: str | None, name: str, **kwargs: Any
    ) -> None:
        self.model = memory_model or (model if agent == "llm" else None)
        self.name, self.kwargs = name, kwargs
        self.script: ScriptedModel | None = None

    def client(self) -> LiteLLMClient:
        if self.model is not None:
            return memory_client(self.model, **self.kwargs)
        if self.script is None:
            self.script = scripted_memory_model(self.name)
        return memory_client(self.script.model)

    def close(self) -> None:
        if self.script is not None:
            unregister(self.script.name)
            self.script = None


def memory_client(model: str, **kwargs: Any) -> LiteLLMClient:
    """The memories' client: structured output for scripted models, as the agents get it."""
    if model.startswith("flowstate-scripted/"):
        kwargs.setdefault("structured", True)
    return LiteLLMClient(model, **kwargs)
