"""The fault suite's parts at bench scale, each returning plain JSON-ready figures.

Fuzzing uses hypothesis programmatically (`@given` with `max_examples`, a fixed `seed`, the
generate phase only): every case is counted and its failure recorded, instead of stopping
at the first and shrinking it, so a run reports how many of N cases broke.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from flowstate.local.server import LocalServer
from flowstate.settings import Neo4jSettings
from flowstate.store import Store
from flowstate_bench.fault_agents import concurrent_agents
from flowstate_bench.fault_kills import kill_round
from flowstate_bench.fault_many_writers import many_writers
from flowstate_bench.fault_outage import unreachable_during_request
from flowstate_bench.fault_servers import client_settings, spare_server
from flowstate_bench.fault_writers import concurrent_writers

Say = Callable[[str], None]
MAX_LISTED = 20  # failures quoted in the report; the counts cover all of them


def _cut(text: str, n: int = 400) -> str:
    return text if len(text) <= n else text[:n] + f"... [{len(text)} chars]"


def fuzz(cases: int, seed: int, store: Store | None = None, say: Say = print) -> dict:
    """`cases` fuzzed requests: through the pure step logic, or whole on Neo4j with `store`."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    from flowstate_bench.fuzz_replies import conversations
    from flowstate_bench.fuzz_runs import fast_case, full_case

    tally: Counter[str] = Counter()
    failures: list[str] = []
    began = time.monotonic()

    @seeded(seed)
    @settings(max_examples=cases, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(conversations(max_replies=5 if store is None else 4))
    def one(replies: list[str]) -> None:
        tally["cases"] += 1
        try:
            stats = full_case(store, replies, "bench_faults_fuzz") if store else fast_case(replies)
        except Exception as e:  # counted and quoted, never allowed to stop the run
            failures.append(_cut(f"{type(e).__name__}: {e} | replies: {replies!r}"))
            return
        tally["replies"] += stats.replies
        tally["replies_unparsed"] += stats.unparsed
        tally["rejections_told"] += stats.rejections
        tally["states_committed"] += stats.states
        tally["relations_committed"] += stats.relations
        tally["tool_runs"] += stats.tool_runs
        tally["answered"] += stats.answered
        if tally["cases"] % 2000 == 0:
            say(f"  fuzz: {tally['cases']:,} cases, {len(failures)} failures")

    one()
    return {
        **dict(tally),
        "failures": len(failures),
        "failure_examples": failures[:MAX_LISTED],
        "generator": f"hypothesis @given, seed {seed}, generate phase only",
        "seconds": round(time.monotonic() - began, 1),
    }


def crowd(store: Store, agents: int, requests: int) -> dict:
    began = time.monotonic()
    found = concurrent_agents(store, agents, requests, prefix="bench_faults_crowd")
    report = asdict(found)
    report["problems"] = found.problems[:MAX_LISTED]
    report["problem_count"] = len(found.problems)
    return {**report, "seconds": round(time.monotonic() - began, 1)}


def writers(settings: Neo4jSettings, writers: int, requests: int) -> dict:
    began = time.monotonic()
    found = concurrent_writers(settings, writers, requests, namespace="bench_faults_writers")
    report = asdict(found)
    report["problems"] = found.problems[:MAX_LISTED]
    return {**report, "seconds": round(time.monotonic() - began, 1)}


@contextmanager
def _quiet_driver() -> Iterator[None]:
    """The driver logs every retry while a server is down on purpose: noise in this report."""
    log = logging.getLogger("neo4j")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(level)


def spare_faults(
    kills: int, say: Say = print, after_commits: int = 40, many: ManyShape | None = None
) -> dict:
    """`kills` SIGKILL rounds, then the outage scenario, then (with `many`) the many-writer
    run with its Neo4j restart, on one spare server (stopped after)."""
    rounds: list[dict] = []
    with (
        tempfile.TemporaryDirectory(prefix="flowstate-faults-") as tmp,
        _quiet_driver(),
        spare_server(Path(tmp) / "spare") as server,
    ):
        say(f"  spare Neo4j on port {server.settings.bolt_port}")
        for n in range(kills):
            found = kill_round(server, ["kill_a", "kill_b", "kill_c"], after_commits, seed=n)
            rounds.append(asdict(found))
            say(f"  kill {n + 1}/{kills}: {found.acked} acknowledged, {found.cut} cut "
                f"({found.cut_landed} landed whole), {found.lost} lost, "
                f"{len(found.problems)} problems")  # fmt: skip
        outages = [asdict(unreachable_during_request(server, f"outage_{at}", at=at))
                   for at in ("draft", "commit")]  # fmt: skip
        for out in outages:
            say(f"  outage at {out['at']}: gave up after {out['failed_after_s']:.2f}s, "
                f"{out['model_calls']} model calls, {len(out['problems'])} problems")  # fmt: skip
        parts = {"kills": rounds, "outage": outages[0], "outage_at_commit": outages[1]}
        if many is not None:
            parts["many_writers"] = many_writers_run(client_settings(server), many, say, server)
    return parts


@dataclass(frozen=True)
class ManyShape:
    writers: int
    requests: int  # per writer
    kills: int  # writer processes SIGKILLed mid-request


def many_writers_run(
    settings: Neo4jSettings, shape: ManyShape, say: Say = print, server: LocalServer | None = None
) -> dict:
    """The many-writer run (`fault_many_writers`), said in one line."""
    where = "the spare Neo4j (restarted once)" if server else settings.uri
    say(f"{shape.writers} writers x {shape.requests} requests through every shell on one "
        f"namespace of {where}, {shape.kills} writer processes SIGKILLed...")  # fmt: skip
    found = many_writers(settings, shape.writers, shape.requests, shape.kills, server=server)
    say(f"  {found['committed']} committed, {found['lost']} lost, {found['duplicated']} "
        f"duplicated, {len(found['unexplained_gaps'])} unexplained id gaps, "
        f"{found['guard_inconsistent']} inconsistent guard decisions")  # fmt: skip
    return found
