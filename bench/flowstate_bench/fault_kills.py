"""Neo4j SIGKILLed while requests commit: after a restart every request is whole or absent.

Writers commit synthetic requests (20 states, relations, observations, evidence each) through
`Repository.commit` in a loop, each in its own namespace. Once enough have landed the server
is killed without warning, in the middle of whatever commit is running, then restarted on the
same data folder. Then: every acknowledged commit must be there (durability), the commit that
was cut must be entirely there or entirely absent (atomicity), and nothing else may exist.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from flowstate.errors import StoreError
from flowstate.local.server import LocalServer
from flowstate.models import RequestBundle
from flowstate.store import Repository, Store
from flowstate_bench.fault_audit import audit
from flowstate_bench.fault_servers import client_settings, kill, restart
from flowstate_bench.synthetic import BundleShape, request_bundle

KILL_SHAPE = BundleShape(states=20, relations=40, observations=5, evidence=5)


@dataclass
class Writer:
    """Commits requests into one namespace until the database fails under it."""

    repo: Repository
    shape: BundleShape = KILL_SHAPE
    sent: dict[int, RequestBundle] = field(default_factory=dict)
    acked: list[int] = field(default_factory=list)
    cut: int | None = None  # the seq whose commit raised
    error: str = ""  # the exception the writer saw, `Class: message`

    def run(self, stop: threading.Event) -> None:
        seq = self.repo.next_request_seq()
        while not stop.is_set():
            bundle = request_bundle(self.repo.namespace, seq, self.shape)
            self.sent[seq] = bundle
            try:
                self.repo.commit(bundle)
            except StoreError as e:
                cause = type(e.__cause__).__name__
                self.cut, self.error = seq, f"{type(e).__name__} (from {cause}): {e}"
                return
            self.acked.append(seq)
            seq += 1


@dataclass
class KillRound:
    """What one kill did: commits acknowledged before it, cut by it, and what survived."""

    acked: int = 0
    cut: int = 0  # commits in flight when the server died
    cut_landed: int = 0  # ...of which the restarted server holds (atomically, whole)
    lost: int = 0  # acknowledged but missing after restart: must be 0
    incomplete: int = 0  # visible but not exactly as sent: must be 0
    states_checked: int = 0
    errors: list[str] = field(default_factory=list)  # what the writers were told
    problems: list[str] = field(default_factory=list)
    restart_s: float = 0.0


Check = Callable[[Repository], list[str]]


def kill_round(
    server: LocalServer,
    namespaces: list[str],
    after_commits: int = 30,
    seed: int = 0,
    extra_check: Check | None = None,
) -> KillRound:
    """One round: writers on every namespace, SIGKILL once `after_commits` landed, restart,
    audit. Namespaces continue from where an earlier round left them."""
    server.start()  # a no-op when it runs already
    result = KillRound()
    settings = client_settings(server)
    with Store.connect(settings) as store:
        writers = [Writer(Repository(store, ns)) for ns in namespaces]
        history = {w.repo.namespace: _committed(w.repo) for w in writers}
        stop = threading.Event()
        threads = [threading.Thread(target=w.run, args=(stop,), daemon=True) for w in writers]
        for t in threads:
            t.start()
        _wait_for(lambda: sum(len(w.acked) for w in writers) >= after_commits, writers)
        time.sleep(random.Random(seed).uniform(0.0, 0.05))  # land somewhere inside a commit
        kill(server)
        stop.set()
        for t in threads:
            t.join(timeout=120)
    # Closed: the pool's sockets to the dead server no longer hold its port.
    if server.info() is not None:  # the dead pid must not pass for a running server
        result.problems.append("info() still reports the killed server as running")
    result.restart_s = restart(server)
    with Store.connect(settings) as store:
        for w in writers:
            repo = Repository(store, w.repo.namespace)
            _tally(w, repo, history[repo.namespace], result, extra_check)
    return result


def _committed(repo: Repository) -> dict[int, RequestBundle]:
    return {b.request.seq: b for b in repo.bundles()}


def _wait_for(done: Callable[[], bool], writers: list[Writer], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        failed = [w.error for w in writers if w.cut is not None]
        if failed or time.monotonic() > deadline:
            raise StoreError(f"writers failed before the kill: {failed or 'timed out'}")
        time.sleep(0.005)


def _tally(
    w: Writer,
    repo: Repository,
    before: dict[int, RequestBundle],
    result: KillRound,
    extra: Check | None,
) -> None:
    result.acked += len(w.acked)
    if w.cut is not None:
        result.cut += 1
        result.errors.append(w.error)
    found = audit(repo, {**before, **w.sent})
    result.states_checked += found.states
    ns = repo.namespace
    result.problems += [f"{ns}: {p}" for p in found.problems]
    visible = set(found.seqs)
    lost = [s for s in w.acked if s not in visible]
    result.lost += len(lost)
    if lost:
        result.problems.append(f"{ns}: acknowledged commits lost: {lost}")
    if w.cut is not None and w.cut in visible:
        result.cut_landed += 1
    stray = visible - set(before) - set(w.acked) - {w.cut}
    if stray:
        result.problems.append(f"{ns}: requests nobody committed: {sorted(stray)}")
    result.incomplete += len(found.altered)
    if extra is not None:
        result.problems += [f"{ns}: {p}" for p in extra(repo)]
