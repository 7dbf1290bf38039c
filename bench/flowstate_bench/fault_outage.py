"""Neo4j going away in the middle of a request: a clear, bounded failure, then a clean resume.

The request's second tool call stops the (spare) server. The agent saved its draft before the
call (write-ahead), so the first write to fail is the draft save after it: the driver retries
with backoff for `retry_time_s`, then FlowState raises StoreUnavailable naming the URI. Nothing
is committed. Once the server is back, `agent.resume()` continues from the Active State kept in
memory (it holds the tool's observation, which no draft has) without repeating a model call or
the tool call, and commits states from before and after the outage.

`at="commit"` moves the outage to the final commit instead: the model's final answer is then
in hand but cannot be written; resume() must commit it without asking the model again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from flowstate.api import FlowState
from flowstate.engine.step import AgentConfig
from flowstate.errors import RequestInterrupted, StoreUnavailable
from flowstate.llm.scripted import Message, ScriptedModel, unregister
from flowstate.local.server import LocalServer
from flowstate.store import Repository, Store
from flowstate_bench.fault_audit import audit
from flowstate_bench.fault_servers import client_settings, restart

EXPECTED_STATES = ["r1.before", "r1.during", "r1.after"]


@dataclass
class Outage:
    uri: str
    retry_time_s: float
    at: str = "draft"  # which write the outage hit: a draft save or the commit
    raised: str = ""  # `Class: message` of what the agent raised
    failed_after_s: float = 0.0  # from the server being gone to the agent giving up
    committed_during: int = 0  # requests visible right after the outage: must be 0
    draft_during: str | None = None  # the request id of the draft the outage left
    resumed_outcome: str = ""
    answer: str = ""
    committed_states: list[str] = field(default_factory=list)
    cited_observations: list[str] = field(default_factory=list)
    model_calls: int = 0  # in all, before and after the outage
    stop_s: float = 0.0  # the graceful stop the tool did
    restart_s: float = 0.0
    tool_runs: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def _add(key: str, summary: str, evidence: list[str] | None = None) -> dict:
    return {"op": "add", "key": key, "category": "environment", "summary": summary,
            "content": f"{summary} (full detail)", "evidence": evidence or []}  # fmt: skip


STEPS = [
    {"delta": [_add("before", "Recorded before the outage")],
     "action": {"type": "tool", "name": "lookup", "arguments": {"what": "rates"}}},
    {"delta": [_add("during", "Recorded in the step that loses the database")],
     "action": {"type": "tool", "name": "stop_database", "arguments": {}}},
    {"delta": [_add("after", "Recorded after the resume", ["r1.o2"])],
     "action": {"type": "final", "answer": "done", "summary": "Survived an outage"}},
]  # fmt: skip


def unreachable_during_request(
    server: LocalServer,
    namespace: str,
    retry_time_s: float = 2.0,
    at: Literal["draft", "commit"] = "draft",
) -> Outage:
    """Run the scenario on `server` (left running at the end). With `at="draft"` the second
    tool call stops the server, so the draft save after it fails; with `at="commit"` the
    server stops while the model writes its final answer, so the commit fails."""
    server.start()
    settings = client_settings(server, retry_time_s)
    report = Outage(uri=settings.uri, retry_time_s=retry_time_s, at=at)
    runs = report.tool_runs
    gone_at: list[float] = []

    def stop() -> None:
        began = time.monotonic()
        server.stop()
        gone_at.append(time.monotonic())
        report.stop_s = gone_at[0] - began

    def lookup(what: str) -> str:
        """Look something up."""
        runs["lookup"] = runs.get("lookup", 0) + 1
        return f"{what}: 42"

    def stop_database() -> str:
        """Stop the database (the fault under test, when it hits a draft save)."""
        runs["stop_database"] = runs.get("stop_database", 0) + 1
        if at == "draft":
            stop()
        return "the database was stopped"

    def policy(_messages: list[Message]) -> dict:
        step = min(len(model.calls), len(STEPS) - 1)
        if at == "commit" and step == len(STEPS) - 1 and not gone_at:
            stop()
        return STEPS[step]

    model = ScriptedModel.policy(f"outage-{at}-{namespace}", policy)
    try:
        with Store.connect(settings) as store:
            fs = FlowState(store, namespace)
            agent = fs.agent(model.client(), [lookup, stop_database], config=AgentConfig())
            try:
                agent.run("Keep notes while the database goes away")
                report.problems.append("the request finished although the database was stopped")
            except RequestInterrupted as e:
                report.failed_after_s = time.monotonic() - gone_at[0] if gone_at else -1.0
                report.raised = f"{type(e.cause).__name__}: {e}"
                if not isinstance(e.cause, StoreUnavailable):
                    report.problems.append(f"cut by {type(e.cause).__name__}, not StoreUnavailable")
            report.restart_s = restart(server)
            _after_outage(fs.repository, report)
            result = agent.resume()
            report.resumed_outcome, report.answer = result.outcome.value, result.answer
            report.model_calls = len(model.calls)
            _committed(fs.repository, report)
            fs.repository.forget_namespace(force=True)
    finally:
        unregister(model.name)
    return report


def _after_outage(repo: Repository, report: Outage) -> None:
    report.committed_during = len(repo.history())
    drafts = repo.open_requests()
    report.draft_during = drafts[0].request_id if drafts else None
    if report.committed_during or repo.counts().nodes != 1:  # the draft and nothing else
        report.problems.append(f"something was committed during the outage: {repo.counts()}")


def _committed(repo: Repository, report: Outage) -> None:
    bundles = repo.bundles()
    report.committed_states = [s.id for b in bundles for s in b.states]
    report.cited_observations = [o.id for b in bundles for o in b.observations]
    found = audit(repo)
    report.problems += found.problems
    if report.committed_states != EXPECTED_STATES:
        report.problems.append(f"states lost or doubled: {report.committed_states}")
    if report.model_calls != len(STEPS):
        report.problems.append(f"{report.model_calls} model calls; the script has 3 steps")
    if report.answer != "done":
        report.problems.append(f"the final answer was lost: {report.answer!r}")
    if report.tool_runs != {"lookup": 1, "stop_database": 1}:
        report.problems.append(f"tools ran {report.tool_runs}, once each expected")
    if repo.open_requests():
        report.problems.append("a draft is left after the commit")
