"""`flowstate bench mcp-sizes`: what a host's model reads of each memory tool's result, in
tokens, as text and as structured content, over one scripted 12-call session.

Some hosts (Claude Code) show their model only `JSON.stringify(structuredContent)` when a
result carries structured content, and drop the text block; others show the text. Both views
are counted here with `flowstate.tokens.count_tokens`: the text block as it is, the structured
content as `JSON.stringify` writes it (no spaces, non-ASCII kept as it is).

The session, through a real MCP client (in process) against a real Neo4j, in a namespace of
its own that is forgotten afterwards: memory_remember twice, memory_begin, memory_index (the
request's), memory_search, memory_reveal, memory_observe, memory_record, memory_commit,
memory_why, memory_history, memory_index.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import asdict, dataclass
from typing import Any

from flowstate.api import FlowState
from flowstate.mcp.memory import Memory
from flowstate.mcp.sdk import in_memory_client
from flowstate.mcp.server import build_server
from flowstate.mcp.settings import McpSettings
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from flowstate.tokens import count_tokens

# The bounds a result must keep: structured <= RATIO x text + SLACK tokens, each call; and
# structured <= RATIO x text over the session.
RATIO = 1.1
SLACK = 8


@dataclass(frozen=True)
class Sized:
    """One call's result, measured."""

    tool: str
    text: str
    structured: str  # as JSON.stringify writes it
    text_tokens: int
    structured_tokens: int

    @property
    def within(self) -> bool:
        return self.structured_tokens <= RATIO * self.text_tokens + SLACK


def stringify(value: Any) -> str:
    """`value` as JavaScript's `JSON.stringify` writes it (compact, non-ASCII as it is)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def sized(tool: str, text: str, structured: dict[str, Any]) -> Sized:
    shown = stringify(structured)
    return Sized(tool, text, shown, count_tokens(text), count_tokens(shown))


class _Host:
    """A host's client: calls a tool, keeps what it read, fails on a refused call."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.calls: list[Sized] = []

    async def call(self, tool: str, /, **arguments: Any) -> dict[str, Any]:
        result = (await self.client.call_tool(tool, arguments)).model_dump(by_alias=True)
        text = "".join(c.get("text") or "" for c in result["content"])
        if result.get("isError"):
            raise RuntimeError(f"{tool} failed: {text[:300]}")
        structured = result["structuredContent"]
        self.calls.append(sized(tool, text, structured))
        return dict(structured)


async def _session(host: _Host) -> None:
    budget = {"summary": "Hotel budget 150 EUR a night", "category": "constraint",
              "content": "At most 150 EUR per night, taxes included", "key": "budget"}  # fmt: skip
    await host.call("memory_remember", **budget)
    ben = {"summary": "Ben uses a wheelchair: everything must be step-free",
           "category": "constraint", "key": "step_free"}  # fmt: skip
    await host.call("memory_remember", **ben)
    begun = await host.call("memory_begin", text="Book a hotel in Lisbon within our budget")
    rid = begun["request_id"]
    held = {"request_id": rid, "handle": begun["handle"]}
    await host.call("memory_index", **held)
    await host.call("memory_search", query="hotel budget", **held)
    await host.call("memory_reveal", ids=["r1.budget"], **held)
    output = '[{"id": "H1", "name": "Casa Azul", "price": 120, "step_free": true}]'
    arguments = {"city": "Lisbon", "max_price": 150}
    observed = await host.call(
        "memory_observe", tool="search_hotels", arguments=arguments, output=output, **held
    )
    oid = next(v for v in observed.values() if isinstance(v, str) and ".o" in v)
    hotel = {"op": "add", "key": "hotel", "category": "decision",
             "summary": "Casa Azul chosen: 120 EUR, step-free",
             "content": "Casa Azul, 120 EUR a night, step-free rooms",
             "relations": [{"type": "DEPENDS_ON", "target": "r1.budget"}],
             "evidence": [oid]}  # fmt: skip
    await host.call("memory_record", delta=[hotel], **held)
    await host.call("memory_commit", answer="Booked Casa Azul", summary="Hotel booked", **held)
    await host.call("memory_why", state_id=f"{rid}.hotel")
    await host.call("memory_history")
    await host.call("memory_index")


def measure(settings: Neo4jSettings, namespace: str | None = None) -> list[Sized]:
    """Run the session against a fresh server over a new namespace (forgotten afterwards);
    each call's result, measured, in call order."""
    namespace = namespace or f"bench_sizes_{uuid.uuid4().hex[:8]}"
    with Store.connect(settings) as store:
        memory = Memory(lambda say: FlowState(store, namespace), lambda _: None)
        memory.start()
        memory.get(30)
        server, _ = build_server(memory, McpSettings(namespace=namespace))

        async def run() -> list[Sized]:
            async with in_memory_client(server) as client:
                host = _Host(client)
                await _session(host)
                return host.calls

        try:
            return asyncio.run(run())
        finally:
            memory.close()
            Repository(store, namespace).forget_namespace(force=True)


def report(calls: list[Sized]) -> dict[str, Any]:
    """Each call's two sizes, the session's totals and whether the bounds hold."""
    text = sum(c.text_tokens for c in calls)
    structured = sum(c.structured_tokens for c in calls)
    return {
        "calls": [
            {k: v for k, v in asdict(c).items() if k.endswith("_tokens") or k == "tool"}
            | {"within": c.within}
            for c in calls
        ],
        "text_tokens": text,
        "structured_tokens": structured,
        "ratio": round(structured / text, 2),
        "within": all(c.within for c in calls) and structured <= RATIO * text,
    }


def table(figures: dict[str, Any]) -> str:
    """The report as a Markdown table, as docs/mcp.md shows it."""
    rows = ["| call | tool | text | structured |", "|---:|---|---:|---:|"]
    for n, c in enumerate(figures["calls"], start=1):
        rows.append(f"| {n} | `{c['tool']}` | {c['text_tokens']} | {c['structured_tokens']} |")
    rows.append(
        f"| | session | {figures['text_tokens']} | {figures['structured_tokens']} "
        f"({figures['ratio']}x) |"
    )
    return "\n".join(rows)
