"""The scripted completions behind Mem0's and Graphiti's prompts: a careful model that extracts
exactly the facts FlowState stores for the request being written, no more, no less.

Each script is told the request in progress (`current`, set before each write) and answers
the prompt it is sent by the prompt's own structure, reading what the system put in it:

- Mem0 (its additive extraction, JSON mode): one memory per FlowState state (`Fact.text`),
  linked to the existing memories of the same key (a superseded state);
- Graphiti (structured calls, by the reply schema's name): one entity per state key plus one
  hub entity for the trip, one fact edge per state from the hub, carrying `Fact.text`; an
  extracted entity is a duplicate of an existing one of the same name; a new fact contradicts
  an existing one of the same key (FlowState's SUPERSEDES); an entity's summary is its state's
  summary line, the hub's the request's SUMMARY line; no dates beyond what the facts say.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from flowstate_bench.upkeep.demo_writes import Fact, RequestWrites
from flowstate_bench.upkeep.endpoint import Received

HUB = "trip plan"


def _user(call: Received) -> str:
    users = [m for m in call.messages if m.get("role") == "user"]
    content = users[-1].get("content", "") if users else ""
    return content if isinstance(content, str) else json.dumps(content)


def _system(call: Received) -> str:
    systems = [m for m in call.messages if m.get("role") in ("system", "developer")]
    return str(systems[0].get("content", "")) if systems else ""


def _between(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.DOTALL)
    if match is None:
        raise ValueError(f"the prompt has no <{tag}> block")
    return match.group(1).strip()


def _section(text: str, title: str) -> str:
    """A Mem0 prompt's `## <title>` section."""
    match = re.search(
        rf"^## {re.escape(title)}\n(.*?)(?=\n\n## |\n\n# |\Z)", text, re.DOTALL | re.M
    )
    return match.group(1).strip() if match else ""


def key_of(fact_text: str) -> str:
    """The state key a fact text starts with (`Fact.text`)."""
    return fact_text.split(":", 1)[0].strip().lower()


def entity_name(fact: Fact) -> str:
    return fact.key.replace("_", " ")


class Script:
    """The request being written: set by the runner before each write."""

    def __init__(self) -> None:
        self.current: RequestWrites | None = None

    def __call__(self, call: Received) -> str:
        raise NotImplementedError

    @property
    def facts(self) -> tuple[Fact, ...]:
        if self.current is None:
            raise ValueError("no write in progress")
        return self.current.facts


class Mem0Script(Script):
    """Mem0's extraction prompt: `{"memory": [{"id", "text", "attributed_to",
    "linked_memory_ids"}]}`."""

    def __call__(self, call: Received) -> str:
        if "Memory Extractor" not in _system(call):
            raise ValueError("not a Mem0 extraction prompt")
        existing = json.loads(_section(_user(call), "Existing Memories") or "[]")
        memories = []
        for i, fact in enumerate(self.facts):
            item: dict[str, Any] = {
                "id": str(i),
                "text": fact.text,
                "attributed_to": "user"
                if fact.category in ("preference", "constraint")
                else "assistant",
            }
            linked = [m["id"] for m in existing if key_of(m.get("text", "")) == key_of(fact.text)]
            if linked:
                item["linked_memory_ids"] = linked
            memories.append(item)
        return json.dumps({"memory": memories}, ensure_ascii=False)


class GraphitiScript(Script):
    """Graphiti's structured prompts, by the name of the reply schema they ask for."""

    def __call__(self, call: Received) -> str:
        name = call.schema_name
        answer = getattr(self, f"_{name}", None)
        if answer is None:
            raise ValueError(f"no scripted reply for Graphiti's {name or 'unnamed'} prompt")
        return json.dumps(answer(_user(call)), ensure_ascii=False)

    def _names(self) -> list[str]:
        return list(dict.fromkeys([HUB, *(entity_name(f) for f in self.facts)]))

    def _ExtractedEntities(self, prompt: str) -> dict[str, Any]:  # noqa: N802 (schema name)
        return {
            "extracted_entities": [
                {"name": n, "entity_type_id": 0, "episode_indices": [0]} for n in self._names()
            ]
        }

    def _NodeResolutions(self, prompt: str) -> dict[str, Any]:  # noqa: N802
        extracted = json.loads(_between(prompt, "ENTITIES"))
        existing = json.loads(_between(prompt, "EXISTING ENTITIES"))
        by_name = {str(c["name"]).lower(): c["candidate_id"] for c in existing}
        return {
            "entity_resolutions": [
                {
                    "id": e["id"],
                    "name": e["name"],
                    "duplicate_candidate_id": by_name.get(str(e["name"]).lower(), -1),
                }  # fmt: skip
                for e in extracted
            ]
        }

    def _ExtractedEdges(self, prompt: str) -> dict[str, Any]:  # noqa: N802
        return {
            "edges": [
                {
                    "source_entity_name": HUB,
                    "target_entity_name": entity_name(f),
                    "relation_type": f"HAS_{f.category.upper()}",
                    "fact": f.text,
                    "valid_at": None,
                    "invalid_at": None,
                    "episode_indices": [0],
                }
                for f in self.facts
            ]
        }

    def _EdgeDuplicate(self, prompt: str) -> dict[str, Any]:  # noqa: N802
        new = _between(prompt, "NEW FACT")
        existing = _facts(_between(prompt, "EXISTING FACTS"))
        candidates = _facts(_between(prompt, "FACT INVALIDATION CANDIDATES"))
        same = [e["idx"] for e in existing if e["fact"] == new]
        replaced = [
            e["idx"]
            for e in [*existing, *candidates]
            if e["fact"] != new and key_of(e["fact"]) == key_of(new)
        ]
        return {"duplicate_facts": same, "contradicted_facts": replaced}

    def _SummarizedEntities(self, prompt: str) -> dict[str, Any]:  # noqa: N802
        entities = json.loads(_between(prompt, "ENTITIES"))
        said = {entity_name(f): f.summary for f in self.facts}
        said[HUB] = self.current.summary if self.current else ""
        out = [
            {"name": e["name"], "summary": said[e["name"]]}
            for e in entities
            if said.get(e.get("name", ""))
        ]
        return {"summaries": out}

    def _EdgeTimestamps(self, prompt: str) -> dict[str, Any]:  # noqa: N802
        return {"valid_at": None, "invalid_at": None}


def _facts(block: str) -> list[dict[str, Any]]:
    """Graphiti's fact lists, written into the prompt as Python literals."""
    value = ast.literal_eval(block) if block else []
    return list(value)
