"""Several writers on ONE namespace at once: their requests run side by side (each request has
its own draft and its own hold), nobody is refused or stuck, no seq or draft is shared.

Each writer has its own Store (its own driver and connections, as a separate process would)
and runs its requests one after another; each request adds one state carrying a token unique
to (writer, request) and calls a tool that pauses, so requests of different writers are open
at the same moment. Afterwards the namespace must hold exactly writers x requests requests,
r1..rN without gaps or repeats, each with its own token once, and no open request left.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from flowstate.api import FlowState
from flowstate.llm.scripted import Message, ScriptedModel, unregister
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store

_TOKEN = re.compile(r"token=(\S+)")


@dataclass
class Writers:
    writers: int
    requests: int  # per writer
    committed: int = 0
    most_open_at_once: int = 0  # requests inside their paused tool call at the same moment
    failed: int = 0  # requests that raised instead of answering
    distinct_ids: int = 0
    repeated_ids: int = 0
    gaps: int = 0  # seqs between 1 and the highest that no committed request has
    states_checked: int = 0
    crossed: int = 0  # a request holding another request's token
    missing: int = 0  # tokens of answered requests not found in the graph
    open_left: int = 0  # requests still open (a draft and a hold) after every writer finished
    problems: list[str] = field(default_factory=list)


def _policy() -> object:
    """Odd calls add the token's state and pause; even calls answer (one writer's model)."""
    calls = {"n": 0}
    lock = threading.Lock()

    def reply(messages: list[Message]) -> dict:
        with lock:
            calls["n"] += 1
            first = calls["n"] % 2 == 1
        found = _TOKEN.search(messages[-1]["content"].split("# User request", 1)[-1])
        tok = found.group(0) if found else "token=none"
        if not first:
            return {"action": {"type": "final", "answer": tok, "summary": f"Did {tok}"}}
        mark = {"op": "add", "key": "mark", "category": "environment",
                "summary": f"mark of {tok}", "content": tok}  # fmt: skip
        return {"delta": [mark], "action": {"type": "tool", "name": "pause", "arguments": {}}}

    return reply


class _Overlap:
    """How many requests are inside the paused tool at once: above 1, they ran side by side."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = self.most = 0

    def pause(self) -> str:
        with self._lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.02)
        with self._lock:
            self.now -= 1
        return "paused"


def _writer(settings: Neo4jSettings, namespace: str, w: int, requests: int, found: Writers,
            lock: threading.Lock, overlap: _Overlap) -> list[str]:  # fmt: skip
    def pause() -> str:
        """Holds the request open a moment, so that other writers' requests run meanwhile."""
        return overlap.pause()

    model = ScriptedModel.policy(f"writers-{namespace}-{w}", _policy())  # type: ignore[arg-type]
    answered: list[str] = []
    try:
        with Store.connect(settings, ensure_schema=False) as store:
            agent = FlowState(store, namespace).agent(model.client(), tools=[pause])
            for n in range(1, requests + 1):
                try:
                    answered.append(agent.run(f"Please do token={w}-{n}").answer)
                except Exception as e:  # noqa: BLE001 - every failure is a finding
                    with lock:
                        found.failed += 1
                        found.problems.append(f"writer {w} request {n}: {type(e).__name__}: {e}")
    finally:
        unregister(model.name)
    return answered


def concurrent_writers(
    settings: Neo4jSettings, writers: int, requests: int, namespace: str = ""
) -> Writers:
    """Run the writers on one namespace, check it, forget it; the findings."""
    namespace = namespace or f"writers_{uuid.uuid4().hex[:8]}"
    found = Writers(writers, requests)
    lock = threading.Lock()
    overlap = _Overlap()
    with Store.connect(settings) as store:
        repo = Repository(store, namespace)
        try:
            with ThreadPoolExecutor(max_workers=writers) as pool:
                jobs = [
                    pool.submit(_writer, settings, namespace, w, requests, found, lock, overlap)
                    for w in range(writers)
                ]
                answers = [a for job in jobs for a in job.result()]
            found.most_open_at_once = overlap.most
            _check(repo, answers, found)
        finally:
            repo.forget_namespace(force=True)
    return found


def _check(repo: Repository, answers: list[str], found: Writers) -> None:
    history = repo.history()
    found.committed = len(history)
    seqs = [r.seq for r in history]
    found.distinct_ids = len(set(seqs))
    found.repeated_ids = len(seqs) - len(set(seqs))
    found.gaps = (max(seqs, default=0)) - len(set(seqs))
    if found.committed != len(answers):
        found.problems.append(f"{len(answers)} answers but {found.committed} requests committed")
    tokens: dict[str, str] = {}  # token -> request id
    for bundle in repo.bundles():
        for state in bundle.states:
            found.states_checked += 1
            if state.content in tokens:
                found.crossed += 1
                found.problems.append(
                    f"{state.content} stored by {tokens[state.content]} and {state.request_id}"
                )
            tokens[state.content] = state.request_id
        if bundle.request.answer not in [s.content for s in bundle.states]:
            found.crossed += 1
            found.problems.append(f"{bundle.request.id} answered {bundle.request.answer!r}")
    found.missing = sum(1 for a in answers if a not in tokens)
    found.open_left = len(repo.open_requests())
    if found.open_left:
        found.problems.append(f"{found.open_left} requests left open")
    if found.repeated_ids or found.gaps:
        found.problems.append(f"repeated ids {found.repeated_ids}, gaps {found.gaps}")
