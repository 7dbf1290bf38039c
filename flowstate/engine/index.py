"""The Historical State Index as the model sees it, kept within a token budget.

Per past request: its id and summary, then one line per state (id, category, summary).
When the whole index would exceed the budget, the oldest requests collapse to a single line
(id, summary, number of states); accessing a collapsed request id lists its states. When even
the one-line requests exceed it, the oldest of them (at small budgets all of them) fold into
one range line ("r1-r1800: 1800 older requests"), whose ids can still be accessed. Nothing is
dropped silently: every past request is either shown or named by a range, with how to open it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from flowstate.models import ids
from flowstate.models.records import Relation
from flowstate.models.views import IndexRequest, IndexState
from flowstate.models.vocab import RelationType
from flowstate.tokens import count_tokens

DEFAULT_BUDGET_TOKENS = 2_000
LOAD_CHUNK = 50  # requests whose state lines are fetched per round trip when loading
_UNLOADED = 10**9  # the "full" cost of a request whose state lines were not loaded

if TYPE_CHECKING:
    from flowstate.store import Repository
    from flowstate.store.ops import Ops
    from flowstate.store.plans import Plan


@dataclass(frozen=True)
class RenderedIndex:
    text: str
    tokens: int
    budget: int
    collapsed: frozenset[str]  # request ids shown as one line or inside the folded range
    state_ids: frozenset[str]  # state ids listed in full
    folded: tuple[str, str] | None = None  # first and last request id of the folded range

    @property
    def within_budget(self) -> bool:
        return self.tokens <= self.budget


def state_line(state: IndexState) -> str:
    line = f"  {state.id} [{state.category.value}] {state.summary}"
    if state.superseded_by:
        line += f"  (SUPERSEDED by {state.superseded_by})"
    return line


def _full_block(req: IndexRequest) -> str:
    return "\n".join([f"{req.id}: {req.summary}", *(state_line(s) for s in req.states)])


def _folded_line(reqs: list[IndexRequest]) -> str:
    states = sum(r.n_states for r in reqs)
    return (
        f"{reqs[0].id}-{reqs[-1].id}: {len(reqs)} older requests with {states} states, "
        "folded; access one of these request ids to list its states"
    )


def _collapsed_block(req: IndexRequest) -> str:
    n = req.n_states
    return f"{req.id}: {req.summary}  [{n} state{'s' * (n != 1)}; collapsed: access {req.id}]"


class HistoricalIndex:
    """The index of one namespace, updated incrementally as requests commit.

    The rendering is cached until the next change: the engine renders at every step, and the
    index changes only between requests.
    """

    def __init__(
        self,
        requests: Iterable[IndexRequest] = (),
        budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        model: str | None = None,
    ) -> None:
        self.budget = budget_tokens
        self.model = model
        self._requests: dict[str, IndexRequest] = {}
        self._cost: dict[str, tuple[int, int]] = {}  # id -> (full, collapsed) tokens
        self._rendered: RenderedIndex | None = None
        for req in requests:
            self.add(req)

    @classmethod
    def load(
        cls, repo: Repository, budget_tokens: int = DEFAULT_BUDGET_TOKENS, model: str | None = None
    ) -> HistoricalIndex:
        """The namespace's index, read now through the sync repository (see `loading`)."""
        return repo.run(cls.loading(repo.ops, budget_tokens, model))

    @classmethod
    def loading(
        cls, ops: Ops, budget_tokens: int = DEFAULT_BUDGET_TOKENS, model: str | None = None
    ) -> Plan[HistoricalIndex]:
        """The namespace's index as a plan, fetching state lines only where they can be shown.

        Requests collapse oldest first, so once the newest ones alone exceed the budget in
        full, every older request is shown collapsed: its id, summary and state count
        suffice. That keeps loading cheap for namespaces of any size.
        """
        heads = yield from ops.index_heads()
        index = cls((), budget_tokens, model)
        loaded: dict[str, IndexRequest] = {}
        listed_cost, end = 0, len(heads)
        while end > 0 and listed_cost <= budget_tokens:
            chunk = heads[max(0, end - LOAD_CHUNK) : end]
            for req in (yield from ops.index(chunk[0].seq, chunk[-1].seq)):
                loaded[req.id] = req
                listed_cost += count_tokens(_full_block(req), model)
            end -= len(chunk)
        for head in heads:
            index.add(loaded.get(head.id, head))
        return index

    @property
    def requests(self) -> list[IndexRequest]:
        return list(self._requests.values())

    def add(self, req: IndexRequest) -> None:
        self._requests[req.id] = req
        full = count_tokens(_full_block(req), self.model) if req.loaded else _UNLOADED
        self._cost[req.id] = (full, count_tokens(_collapsed_block(req), self.model))
        self._rendered = None

    def apply_commit(self, entry: IndexRequest, relations: Iterable[Relation]) -> None:
        """Add a just-committed request and mark the states it superseded (no full rebuild)."""
        for rel in relations:
            if rel.type is RelationType.SUPERSEDES:
                self._mark_superseded(rel.target, rel.source)
        self.add(entry)

    def __contains__(self, request_id: str) -> bool:
        return request_id in self._requests

    def _mark_superseded(self, state_id: str, by: str) -> None:
        req = self._requests.get(ids.request_of(state_id))
        if req is None or not req.loaded:
            return  # not listed: its lines are fetched fresh when the request is opened
        states = [
            s.model_copy(update={"superseded_by": by}) if s.id == state_id else s
            for s in req.states
        ]
        self.add(req.model_copy(update={"states": states}))

    def render(self) -> RenderedIndex:
        if self._rendered is None:
            self._rendered = self._render()
        return self._rendered

    def _render(self) -> RenderedIndex:
        order = list(self._requests.values())
        collapsed: set[str] = {r.id for r in order if not r.loaded}
        folded = 0  # how many of the oldest requests fold into the range line
        # Plan on per-request costs (cheap), then confirm on the exact text.
        estimate = sum(self._cost[r.id][0] for r in order) + len(order)
        for req in order:
            if estimate <= self.budget:
                break
            full, short = self._cost[req.id]
            estimate -= full - short
            collapsed.add(req.id)
        range_cost = count_tokens(_folded_line(order[:1]), self.model) + 4 if order else 0
        # Even the newest request may fold (long summaries, a small budget): the budget holds,
        # and the range line still names every request, so each can be opened.
        while estimate > self.budget and folded < len(order):
            estimate -= self._cost[order[folded].id][1] + 1
            folded += 1
            if folded == 1:
                estimate += range_cost
        text, tokens = self._text(order, collapsed, folded)
        while tokens > self.budget and folded < len(order):
            grow = max(1, len(order) // 50)  # the estimate was a little low: fold a bit more
            collapsed.update(r.id for r in order)
            folded = min(len(order), folded + grow)
            text, tokens = self._text(order, collapsed, folded)
        collapsed.update(r.id for r in order[:folded])
        shown = [s for r in order if r.id not in collapsed for s in r.states]
        # "(SUPERSEDED by r6.x)" shows r6.x too: what was shown can be opened.
        listed = frozenset(s.id for s in shown)
        listed |= {s.superseded_by for s in shown if s.superseded_by}
        span = (order[0].id, order[folded - 1].id) if folded else None
        return RenderedIndex(text, tokens, self.budget, frozenset(collapsed), listed, span)

    def _text(
        self, order: list[IndexRequest], collapsed: set[str], folded: int = 0
    ) -> tuple[str, int]:
        if not order:
            text = "(no past requests yet)"
        else:
            lines = [_folded_line(order[:folded])] if folded else []
            lines += [
                _collapsed_block(r) if r.id in collapsed else _full_block(r) for r in order[folded:]
            ]
            text = "\n".join(lines)
        return text, count_tokens(text, self.model)
