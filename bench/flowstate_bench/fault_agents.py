"""Many agents at once on one Store: every namespace ends up with its own states and no one
else's.

Each agent owns a namespace and runs its requests one after another in its own thread; all
threads share one Store (one driver, one connection pool). The request text carries a token
unique to (namespace, request); the scripted model reads it from the prompt and writes it into
the two states it adds, so a prompt, index or commit crossing namespaces shows up as a foreign
or missing token.
"""

from __future__ import annotations

import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from flowstate.api import FlowState
from flowstate.llm.scripted import Message, ScriptedModel, unregister
from flowstate.store import Repository, Store
from flowstate_bench.fault_audit import audit

_TOKEN = re.compile(r"token=(\S+)/(\d+)")
KEYS = ("first", "second")


@dataclass
class Crowd:
    agents: int
    requests: int
    states_checked: int = 0
    crossed: int = 0  # states carrying another namespace's (or another request's) token
    duplicated: int = 0  # the same token+key stored twice
    missing: int = 0  # states that should exist and do not
    problems: list[str] = field(default_factory=list)


def token(namespace: str, n: int) -> str:
    return f"token={namespace}/{n}"


def _reply(messages: list[Message]) -> dict:
    """Add two states carrying the token found in the user's request, then answer."""
    found = _TOKEN.search(messages[-1]["content"].split("# User request", 1)[-1])
    tok = found.group(0) if found else "token=none/0"
    delta = [
        {"op": "add", "key": k, "category": "environment", "summary": f"{k} of {tok}",
         "content": f"{k} content for {tok}"}
        for k in KEYS
    ]  # fmt: skip
    return {"delta": delta, "action": {"type": "final", "answer": tok, "summary": f"Did {tok}"}}


def _agent_run(store: Store, namespace: str, requests: int) -> list[str]:
    model = ScriptedModel.policy(f"crowd-{namespace}", _reply)
    try:
        agent = FlowState(store, namespace).agent(model.client())
        return [
            agent.run(f"Please do {token(namespace, n)}").answer for n in range(1, requests + 1)
        ]
    finally:
        unregister(model.name)


def concurrent_agents(store: Store, agents: int, requests: int, prefix: str = "") -> Crowd:
    """Run the crowd, check every namespace, forget them all; the findings."""
    prefix = prefix or f"crowd_{uuid.uuid4().hex[:8]}"
    names = [f"{prefix}_{i:03d}" for i in range(agents)]
    crowd = Crowd(agents, requests)
    try:
        with ThreadPoolExecutor(max_workers=agents) as pool:
            answers = list(pool.map(lambda ns: _agent_run(store, ns, requests), names))
        for ns, said in zip(names, answers, strict=True):
            wanted = [token(ns, n) for n in range(1, requests + 1)]
            if said != wanted:
                crowd.problems.append(f"{ns}: answers {said[:3]}... are not its own tokens")
            _check(Repository(store, ns), requests, crowd)
    finally:
        for ns in names:
            Repository(store, ns).forget_namespace(force=True)
    return crowd


def _check(repo: Repository, requests: int, crowd: Crowd) -> None:
    ns = repo.namespace
    found = audit(repo)
    crowd.problems += [f"{ns}: {p}" for p in found.problems]
    if found.requests != requests:
        crowd.problems.append(f"{ns}: {found.requests} requests, {requests} expected")
    expected = {
        f"r{n}.{k}": f"{k} content for {token(ns, n)}" for n in range(1, requests + 1) for k in KEYS
    }
    seen: dict[str, int] = {}
    for bundle in repo.bundles():
        for state in bundle.states:
            crowd.states_checked += 1
            seen[state.content] = seen.get(state.content, 0) + 1
            if expected.get(state.id) != state.content or state.namespace != ns:
                crowd.crossed += 1
                crowd.problems.append(f"{ns}: {state.id} holds {state.content[:80]!r}")
    crowd.duplicated += sum(n - 1 for n in seen.values() if n > 1)
    crowd.missing += sum(1 for c in expected.values() if c not in seen)
    indexed = {s.id: s.summary for r in repo.index() for s in r.states}
    if set(indexed) != set(expected):
        crowd.problems.append(f"{ns}: the index lists {sorted(set(indexed) ^ set(expected))[:6]}")
    foreign = [i for i, summary in indexed.items() if f"token={ns}/" not in summary]
    if foreign:
        crowd.crossed += len(foreign)
        crowd.problems.append(f"{ns}: index lines of other namespaces: {foreign[:6]}")
