"""Progressive access outside any request, for a reader (a read-only MCP server, a UI).

    browse = fs.browse()         # (await afs.browse(): open is awaited there)
    browse.open(["r3"])          # a collapsed request of the index: its state lines
    browse.open(["r3.hotel"])    # now listed: its content and relations (type and id)
    browse.open(["r3.o1"])       # an observation at the far end of a revealed relation

It is the rule a request's steps follow (`flowstate.rules.psa.check_access`), over what this
browse has been shown: the index as it is now, search hits (`shown`), the lines of requests
and the relations of states it opened. Nothing is written; what it opened stays in memory
for the browse's life. `Browse` runs the opening on the sync driver, `AsyncBrowse` on the
async one: the same plan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic

from flowstate.engine.index_view import R
from flowstate.engine.opening import Opened, drop_forgotten, reveal_of, show, take_in
from flowstate.engine.report import StepReport
from flowstate.engine.request_plans import RequestPlans
from flowstate.models.active import ActiveState
from flowstate.rules import check_access
from flowstate.store import AsyncRepository, Repository
from flowstate.store.plans import Plan

# The Active State of no request: no past id belongs to it, so nothing counts as its own.
_NO_REQUEST = "r0"


class BrowseCore(Generic[R]):
    """What one reader was shown and opened, over a model-less agent's index."""

    def __init__(self, agent: RequestPlans[R]) -> None:
        self._agent = agent
        namespace = agent.ops.namespace
        self.active = ActiveState(namespace=namespace, request_id=_NO_REQUEST, seq=0, text="")

    def shown(self, state_ids: Sequence[str]) -> None:
        """Count `state_ids` as shown (a search listed them): they may be opened next."""
        show(self.active, state_ids)

    def forgotten(self, gone: Callable[[str], bool]) -> None:
        """Drop what was just forgotten from what this browse was shown and opened."""
        drop_forgotten(self.active, gone)

    def _opening(self, ids: Sequence[str]) -> Plan[Opened]:
        agent = self._agent
        if not self._all_seen(ids):  # the index decides only what this browse was not shown
            yield from agent.refresh_plan()
        vis = agent.logic.visibility(self.active, agent.index.render())
        decision = check_access(ids, vis, agent.config.limits)
        refused = [str(v) for v in decision.violations]
        # What was opened before is read again: a reader keeps no copy of what has been
        # forgotten or superseded since (another process may have done either).
        fetch = [
            *decision.states,
            *decision.requests,
            *decision.observations,
            *decision.already_open,
        ]
        if fetch:
            found = yield from agent.store_plan(reveal_of(fetch))
            refused += take_in(self.active, found, StepReport(0))
            if found.missing:
                drop_forgotten(self.active, set(found.missing).__contains__)
        fetched = set(fetch)
        return Opened.of(
            self.active, [i for i in dict.fromkeys(i.strip() for i in ids) if i in fetched], refused
        )

    def _all_seen(self, ids: Sequence[str]) -> bool:
        """Whether every id is one this browse was shown itself (a search hit, a write's
        reply) or opened before: the rule then lets it through whatever the index holds, and
        the reveal reads what is current, so the index need not be brought up to date."""
        active = self.active
        seen = {*active.found, *active.revealed, *active.opened_observations}
        asked = [i.strip() for i in ids]
        return bool(asked) and all(i in seen for i in asked)


class Browse(BrowseCore[Repository]):
    """A reader's browse on the sync driver; build it with `FlowState.browse`."""

    def open(self, ids: Sequence[str]) -> Opened:
        """Open those of `ids` the rule lets through; each refused or missing one is told."""
        return self._agent.repo.run(self._opening(ids))


class AsyncBrowse(BrowseCore[AsyncRepository]):
    """`Browse` on the async driver; build it with `await AsyncFlowState.browse()`."""

    async def open(self, ids: Sequence[str]) -> Opened:
        """Open those of `ids` the rule lets through; each refused or missing one is told."""
        return await self._agent.repo.run(self._opening(ids))
