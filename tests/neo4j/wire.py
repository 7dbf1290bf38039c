"""FlowState connected to Neo4j through a Bolt proxy the test can cut (`bolt_proxy.py`).

An outage test builds its agents or sessions on `Wire`'s store and names the transaction to
fail by the Cypher it runs; the driver then meets the failure on its socket, retries as it is
configured to, and FlowState maps what the driver raises:

    with pytest.raises(RequestInterrupted), wire.proxy.cut(DRAFT_SAVES, nth=2):
        agent.run("two steps")          # the second draft save never reaches Neo4j
    result = agent.resume()             # the proxy is back up after the block
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store
from flowstate.store.catalog import Q, query
from tests.neo4j.bolt_proxy import BoltProxy
from tests.neo4j.engine_helpers import SYNC, Harness, Shell

# The statements of a draft save (the first one opens the draft) and of a request's commit.
DRAFT_SAVES = (query(Q.OPEN_DRAFT), query(Q.SAVE_DRAFT))
COMMIT = query(Q.COMMIT_BUNDLE)

# What a test's agent holds its request for when the test lets the hold lapse (the least
# AgentConfig allows).
SHORT_HOLD_S = 5

# Short, so a test does not wait long for the driver to give up against a server that is
# down; long enough that the driver does retry once (its first backoff is about a second).
RETRY_TIME_S = 0.5


def through(settings: Neo4jSettings, proxy: BoltProxy) -> Neo4jSettings:
    """`settings` pointed at the proxy, with a short retry time."""
    return settings.model_copy(
        update={"uri": proxy.uri, "retry_time_s": RETRY_TIME_S, "connect_timeout_s": 2.0}
    )


@dataclass(frozen=True)
class Wire:
    """A store (and, for the async shell, an async store) whose connections go through
    `proxy`; the test's other fixtures (`store`, `repo`, `raw`) stay directly connected, so
    checks see the database as it is."""

    proxy: BoltProxy
    store: Store
    shell: Shell = SYNC

    def harness(self, namespace: str) -> Harness:
        return Harness(self.store, namespace, self.shell)

    def repo(self, namespace: str) -> Repository:
        return Repository(self.store, namespace)


def await_lapse(repo: Repository, timeout_s: float = 30.0) -> None:
    """Wait until no live writer holds the namespace's open request: a writer cut off from
    Neo4j cannot let its hold go, so another one takes over only when it lapses."""
    deadline = time.monotonic() + timeout_s
    while any(r.held for r in repo.open_requests()):
        assert time.monotonic() < deadline, "the hold did not lapse"
        time.sleep(0.25)
