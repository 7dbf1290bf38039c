"""Many writers on ONE namespace through every shell, under faults.

Writers take turns over the shells (sync agent, async agent, session API, MCP server driven by
a client); the first half run as threads of this process, the others each in a process of its
own (`fault_writer_proc`), so that a SIGKILL is real. Each runs its requests one after another
(`fault_writer_jobs`: a mark per request, budgets lowered and paid for against each other).
During the run:

- `kills` writer processes are SIGKILLed in the middle of a request. What the killed process
  held is discarded at once (the holder's process is gone, so its hold is taken over without
  waiting for it to lapse), and a new process carries on with that writer's next request.
  Discarding rather than finishing: the writer that could say what the request was for is
  gone, and a request finished by someone else would answer nobody.
- with a spare `server`, Neo4j is stopped and started again once half the requests are
  answered; the writers' drivers retry through it.
- this process follows the namespace's index commit by commit (as a long-running agent does)
  and counts the requests open at once.

Then `fault_many_check` judges what was committed against what the writers heard.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from flowstate.api import FlowState
from flowstate.errors import StoreError
from flowstate.local.server import LocalServer
from flowstate.settings import Neo4jSettings
from flowstate.store import Store
from flowstate_bench.fault_many_check import check
from flowstate_bench.fault_servers import restart
from flowstate_bench.fault_writer_jobs import WriterJob
from flowstate_bench.fault_writer_proc import job_argument
from flowstate_bench.fault_writer_shells import KINDS, run_writer

SEED = [
    {
        "op": "add",
        "key": "budget",
        "category": "constraint",
        "summary": "Hotel budget 150 EUR a night",
        "content": "At most 150 EUR per night",
    }
]
RIDE_THROUGH_S = 180.0  # how long the writers' drivers retry: longer than a restart


@dataclass
class Run:
    """What happened during the run (the check's findings are reported beside it)."""

    writers: int
    requests: int  # per writer
    shells: dict[str, int]
    writer_processes: int
    writer_kills: int = 0
    killed: list[str] = field(default_factory=list)  # what became of each killed request
    neo4j_restarts: int = 0
    restart_s: float = 0.0
    most_open_at_once: int = 0
    index_follows: int = 0  # times this process brought its index up to date during the run
    index_matches_rebuild: bool = False  # ...and at the end it equals one loaded from scratch
    writer_indexes_matching: int = 0  # writers whose own index equalled a fresh one at the end
    writer_indexes_differing: int = 0  # must be 0
    writer_indexes_unsettled: int = 0  # the namespace never stood still long enough to compare
    revisions: int = 0  # steps or commits refused for a state superseded meanwhile, revised
    failed: int = 0  # requests that raised instead of answering
    namespace_busy: int = 0  # NamespaceBusy refusals: must be 0
    request_held: int = 0  # RequestHeld refusals: must be 0 (no one touches another's request)
    open_left: int = 0  # open after every writer finished (discarded then)
    problems: list[str] = field(default_factory=list)


class _Sink:
    """The events of every writer, in the order they arrived."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[dict[str, Any]] = []
        self.discarded: set[str] = set()
        # Ids handed out, yet neither committed nor open, when a writer was killed: the
        # killed process's request, when the kill came between its id and its first draft.
        self.unsaved: set[str] = set()

    def emit(self, event: dict[str, Any]) -> None:
        with self.lock:
            self.events.append(event)

    def count(self, name: str) -> int:
        with self.lock:
            return sum(1 for e in self.events if e["event"] == name)


class _ProcessWriter:
    """A writer in its own process; SIGKILLed once at `kill_at`, then carried on by another."""

    def __init__(self, job: WriterJob, kill_at: int | None, sink: _Sink, fs: FlowState,
                 run: Run, delay_s: float) -> None:  # fmt: skip
        self.job, self.kill_at, self.sink, self.fs, self.run = job, kill_at, sink, fs, run
        self.delay_s = delay_s
        self.env = dict(os.environ)
        if job.settings.password is not None:
            self.env["FLOWSTATE_NEO4J_PASSWORD"] = job.settings.password.get_secret_value()

    def __call__(self) -> None:
        first = self.job.first
        while first <= self.job.last:
            job = replace(self.job, first=first)
            last_begun = self._one_process(job)
            if last_begun is None:
                return
            first = last_begun + 1

    def _one_process(self, job: WriterJob) -> int | None:
        """Run `job` in a child; the request number it was killed in (None: not killed)."""
        command = [sys.executable, "-m", "flowstate_bench.fault_writer_proc", job_argument(job)]
        with tempfile.TemporaryFile("w+") as errors:
            child = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=errors, text=True, env=self.env
            )
            assert child.stdout is not None
            killed, last_begun = False, job.first - 1
            for line in child.stdout:
                event = _parsed(line)
                if event is None:
                    continue
                self.sink.emit(event)
                if event["event"] != "begun":
                    continue
                last_begun = event["n"]
                if not killed and event["n"] == self.kill_at:
                    time.sleep(self.delay_s)  # land somewhere inside the request
                    os.kill(child.pid, signal.SIGKILL)
                    killed = True
            code = child.wait()
            if not killed:
                if code != 0:
                    errors.seek(0)
                    self.run.problems.append(f"writer {job.writer} exited {code}: "
                                             f"{errors.read()[-800:]}")  # fmt: skip
                return None
        self.kill_at = None
        self._take_over(child.pid, job.writer)
        return last_begun

    def _take_over(self, pid: int, writer: int) -> None:
        """Discard what the killed process held: its holder's process is gone."""
        fates = []
        for open_request in self.fs.pending():
            holder = (open_request.holder or "").split(":")
            if len(holder) >= 2 and holder[1] == str(pid):
                gone = self.fs.discard(open_request.request_id)
                self.sink.discarded.add(gone)
                fates.append(f"{gone} discarded")
        committed = {r.id for r in self.fs.history()}
        still_open = {r.request_id for r in self.fs.pending()}
        handed = self.fs.repository.next_request_seq() - 1
        unsaved = {f"r{s}" for s in range(1, handed + 1)} - committed - still_open
        with self.sink.lock:
            self.sink.unsaved |= unsaved
            self.run.writer_kills += 1
            fate = ", ".join(fates) or "nothing open: it had committed"
            self.run.killed.append(f"writer {writer} (pid {pid}): {fate}")


def _in_thread(job: WriterJob, sink: _Sink, run: Run) -> None:
    try:
        run_writer(job, sink.emit)
    except Exception as e:  # noqa: BLE001 - a writer that could not even start is a finding
        with sink.lock:
            run.problems.append(
                f"writer {job.writer} ({job.kind}) stopped: {type(e).__name__}: {e}"
            )


def _parsed(line: str) -> dict[str, Any] | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None  # something else the child printed
    return event if isinstance(event, dict) and "event" in event else None


def many_writers(settings: Neo4jSettings, writers: int = 8, requests: int = 25, kills: int = 2,
                 server: LocalServer | None = None, namespace: str = "",
                 seed: int = 0) -> dict[str, Any]:  # fmt: skip
    """Run the writers on one namespace (of `server`'s when given: it is restarted once),
    check it, forget it; the findings."""
    namespace = namespace or f"many_writers_{uuid.uuid4().hex[:8]}"
    patient = settings.model_copy(update={"retry_time_s": RIDE_THROUGH_S})
    jobs = [WriterJob(patient, namespace, w, KINDS[w % len(KINDS)], 1, requests)
            for w in range(writers)]  # fmt: skip
    threads_of = jobs[: writers // 2]
    processes = jobs[writers // 2 :]
    run = Run(writers, requests, _shells(jobs), len(processes))
    sink = _Sink()
    rng = random.Random(seed)
    began = time.monotonic()
    with Store.connect(patient) as store:
        fs = FlowState(store, namespace)
        try:
            fs.remember(SEED, "Our hotel budget is 150 EUR a night", summary="Budget set")
            workers = [threading.Thread(target=_in_thread, args=(j, sink, run)) for j in threads_of]
            for i, job in enumerate(processes):
                kill_at = max(2, requests // 3) + i if i < kills and requests >= 2 else None
                writer = _ProcessWriter(job, kill_at, sink, fs, run, rng.uniform(0.0, 0.015))
                workers.append(threading.Thread(target=writer))
            for worker in workers:
                worker.start()
            _follow(fs, workers, run, sink, server, writers * requests)
            _finish(fs, run, sink)
            findings = check(fs.repository, sink.events, sink.discarded, sink.unsaved)
        finally:
            fs.repository.forget_namespace(force=True)
    report: dict[str, Any] = {**asdict(run), **asdict(findings)}
    report["problems"] = (run.problems + findings.problems)[:40]
    report["seconds"] = round(time.monotonic() - began, 1)
    return report


def _shells(jobs: list[WriterJob]) -> dict[str, int]:
    return {kind: sum(1 for j in jobs if j.kind == kind) for kind in KINDS}


def _follow(fs: FlowState, workers: list[threading.Thread], run: Run, sink: _Sink,
            server: LocalServer | None, total: int) -> None:  # fmt: skip
    """Until every writer is done: follow the index, count the open requests, and restart
    the spare server once half the requests are answered."""
    while any(w.is_alive() for w in workers):
        if server is not None and not run.neo4j_restarts and sink.count("answered") * 2 >= total:
            began = time.monotonic()
            server.stop()
            restart(server)
            run.neo4j_restarts, run.restart_s = 1, round(time.monotonic() - began, 1)
        try:
            fs.shown_index()
            run.index_follows += 1
            run.most_open_at_once = max(run.most_open_at_once, len(fs.pending()))
        except StoreError:
            pass  # the server is being restarted: the next round follows again
        time.sleep(0.2)
    for worker in workers:
        worker.join()


def _finish(fs: FlowState, run: Run, sink: _Sink) -> None:
    """Tally the writers' own findings; discard what is left open (a failed request's)."""
    for event in sink.events:
        if event["event"] == "failed":
            run.failed += 1
            run.namespace_busy += event["type"] == "NamespaceBusy"
            run.request_held += event["type"] == "RequestHeld"
            run.problems.append(f"writer {event['writer']} ({event['kind']}) request "
                                f"{event['n']}: {event['error']}")  # fmt: skip
        elif event["event"] == "ended":
            run.problems.append(f"{event['request_id']} ended {event['outcome']}")
        elif event["event"] == "revised":
            run.revisions += 1
        elif event["event"] == "index":
            run.writer_indexes_matching += event["equal"] is True
            run.writer_indexes_differing += event["equal"] is False
            run.writer_indexes_unsettled += event["equal"] is None
            if event["equal"] is False:
                run.problems.append(f"writer {event['writer']}'s index differs from a rebuild")
    left = fs.pending()
    run.open_left = len(left)
    for open_request in left:
        sink.discarded.add(fs.discard(open_request.request_id))
    if left:
        run.problems.append(f"left open: {', '.join(r.request_id for r in left)}")
    fresh = FlowState(fs.store, fs.namespace).shown_index().text
    run.index_matches_rebuild = fs.shown_index().text == fresh
    if not run.index_matches_rebuild:
        run.problems.append("the followed index differs from one rebuilt from scratch")
