"""The server's warm-up, once connected: every tool called once, for real, in a throw-away
namespace inside one transaction that is rolled back (`FlowState.rehearsal`).

Neo4j plans each statement the first time it runs (and again once the data's statistics have
drifted), and Python loads and builds what a tool needs at its first call: together a first
call took up to 30 times its usual time. Rehearsed once the server is connected, each tool's
first real call costs what its later ones do. The index is loaded here too (a first call that
needs it loads it itself). The host's calls go first: a call that comes meanwhile waits for
the one rehearsed call under way at most (the server runs one call at a time). Nothing is
kept: the namespace and all written in it are rolled back, and a failed rehearsal only leaves
that call's first time as it was. It is bounded by `budget_s` (the server ends the
transaction).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flowstate.compact.arguments import Refused
from flowstate.errors import FlowStateError

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.mcp.tools import MemoryTools

log = logging.getLogger("flowstate.mcp")
BUDGET_S = 20.0


def warm_up(
    fs: FlowState,
    tools: MemoryTools,
    budget_s: float = BUDGET_S,
    stop: threading.Event | None = None,
) -> int:
    """Rehearse the tools `tools` lists over `fs`'s server; how many calls succeeded. It
    stops before its next call once `stop` is set (the server is closing)."""
    from flowstate.mcp.memory import Memory
    from flowstate.mcp.tools import MemoryTools

    deadline = time.monotonic() + budget_s
    _after_the_hosts(tools, deadline)
    with tools.lock:  # the index and the tokenizer, which most calls need
        fs.shown_index()
    with fs.rehearsal(timeout_s=budget_s) as dry:
        specs = list(tools.listed.values())
        rehearsed = MemoryTools(Memory.of(dry), tools.page_chars, specs, tools.draft_ttl_s)
        rehearsed.lock = tools.lock  # one call at a time, the host's or a rehearsed one
        over = stop.is_set if stop is not None else (lambda: False)
        return _script(rehearsed, deadline, lambda: _after_the_hosts(tools, deadline), over)


def _after_the_hosts(tools: MemoryTools, deadline: float) -> None:
    """Let the host's calls that wait go first: the lock is not fair, and a call that waits
    for the whole warm-up would wait longer than for its own first time."""
    while tools.waiting and time.monotonic() < deadline:
        time.sleep(0.005)


def _script(
    tools: MemoryTools, deadline: float, turn: Callable[[], None], over: Callable[[], bool]
) -> int:
    """Each tool once, the writes and the reads of a request among them; `turn` before each,
    none once `over()` says so."""
    done = 0

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        nonlocal done
        if name not in tools.listed or time.monotonic() > deadline or over():
            return {}
        turn()
        try:
            _, out = tools.call(name, arguments)
        except (Refused, FlowStateError) as e:  # its first time stays as it was
            log.debug("warm-up: %s: %s", name, e)
            return {}
        done += 1
        return out or {}

    fact = call("memory_remember", {"summary": "Warm-up fact", "category": "preference"})
    state = fact.get("state_id", "r1.warm_up_fact")
    call("memory_reveal", {"ids": [state]})
    call("memory_index", {})
    call("memory_search", {"query": "warm up"})
    call("memory_history", {})
    call("memory_why", {"state_id": state})
    newer = {"summary": "Warm-up fact, newer", "category": "preference"}
    call("memory_remember", {**newer, "relations": [{"type": "SUPERSEDES", "target": state}]})
    begun = call("memory_begin", {"text": "Warm-up request"})
    held = {"request_id": begun.get("request_id", "r3"), "handle": begun.get("handle", "h")}
    call("memory_search", {**held, "query": "warm up"})
    call("memory_reveal", {**held, "ids": [state]})
    seen = call("memory_observe", {**held, "tool": "warm_up", "arguments": {}, "output": "ok"})
    add = {"op": "add", "key": "warm", "category": "decision", "summary": "Warm-up decision"}
    cited = [seen.get("observation_id", "o1")]
    call("memory_record", {**held, "delta": [{**add, "content": "ok", "evidence": cited}]})
    rid = held["request_id"]
    call("memory_guard", {**held, "tool": "warm_up", "arguments": {}, "cites": [f"{rid}.warm"]})
    call("memory_commit", {**held, "answer": "ok", "summary": "Warm-up request"})
    other = call("memory_begin", {"text": "Warm-up request to discard"})
    if other:
        call("memory_discard", {"request_id": other["request_id"], "handle": other["handle"]})
    call("memory_forget", {"id": state})
    return done
