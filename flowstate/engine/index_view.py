"""The namespace's index as one reader keeps it: loaded once, then followed commit by commit.

Every shell that shows or checks the index holds one (an agent, a host's session, the front
door, a browse); `refresh_plan` brings it up to date in the fewest reads. Plans only
(`flowstate.store.plans`): the shells run them on their own repository.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Generic, Protocol, TypeVar

from flowstate.engine.index import HistoricalIndex
from flowstate.engine.step import AgentConfig
from flowstate.models.records import (
    Relation,
)
from flowstate.store.namespace_node import Stamp
from flowstate.store.ops import Ops
from flowstate.store.plans import Plan


class HasOps(Protocol):
    """A repository of either kind: what its plans are made of."""

    ops: Ops


R = TypeVar("R", bound=HasOps)


class IndexView(Generic[R]):
    """One namespace's Historical State Index, as of the last stamp read."""

    def __init__(self, repo: R, config: AgentConfig | None, model_name: str | None) -> None:
        self.repo = repo
        self.ops = repo.ops
        self.config = config or AgentConfig()
        self.model_name = model_name  # whose tokenizer counts the index budget
        self.index = HistoricalIndex((), self.config.index_budget_tokens, model_name)
        self._stamp: Stamp | None = None  # None: the index was never loaded

    def refresh_plan(self, relations: Iterable[Relation] = ()) -> Plan[None]:
        """Append the requests committed since the last look (ours or another process's, in
        any order of seq) and mark what they supersede; load the index when something was
        forgotten, expired or imported meanwhile, or the first time. The stamp is read first:
        a later change is never missed."""
        stamp = yield from self.ops.stamp()
        seen = self._stamp
        if seen is None or not stamp.same_content(seen):
            budget = self.config.index_budget_tokens
            index = yield from HistoricalIndex.loading(self.ops, budget, self.model_name)
            self.adopt(index, stamp)
            return
        if stamp.committed <= seen.committed:
            return
        own = list(relations)
        for entry, supersedes in (yield from self.ops.index_since(seen.committed)):
            self.index.apply_commit(entry, [*own, *supersedes])
        self._stamp = stamp

    def fetch_matches_plan(self, text: str) -> Plan[None]:
        """Load into the index, brought up to date first (`refresh_plan`), what the request
        `text` may need from the whole namespace (`HistoricalIndex.load_matching`), so that
        `index.render(text)` ranks it."""
        assert self._stamp is not None, "refresh the index first"
        yield from self.index.load_matching(self.ops, text, self._stamp.committed)

    @property
    def loaded_at(self) -> Stamp | None:
        """The stamp the index was loaded at (None: never loaded)."""
        return self._stamp

    def adopt(self, index: HistoricalIndex, stamp: Stamp) -> None:
        """Use `index`, as loaded when the namespace had `stamp`."""
        self.index, self._stamp = index, stamp
