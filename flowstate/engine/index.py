"""The Historical State Index as the model sees it, kept within a token budget.

Per past request: its id and summary, then one line per state (id, category, summary).
When the whole index would exceed the budget, requests collapse to a single line (id,
summary, number of states); accessing a collapsed request id lists its states. When even the
one-line requests exceed it, requests fold into one range line ("r1-r1800: 1800 older
requests"), whose ids can still be accessed. Nothing is dropped silently: every past request
is either shown or named by a range, with how to open it.

What collapses and folds first is what the current request needs least: rendered for a
request (`render(query)`), the requests whose states match its words lexically
(`flowstate.engine.relevance`) are kept in full longest, then the most recent ones; without
a request, the most recent. The text is always in request order.

Relevance sees the whole namespace, not only what was loaded: before a request is rendered,
`load_matching` asks the full-text index for the older requests whose states match its words
(a fixed number, in one statement) and loads them with their state lines, so the scorer ranks
them with the rest, and a match from r1 of r120 stays in full above the range line, which
says it is listed apart.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from flowstate.engine.relevance import rank_words, state_text, words
from flowstate.models import ids
from flowstate.models.records import Relation
from flowstate.models.views import IndexRequest, IndexState
from flowstate.models.vocab import RelationType
from flowstate.tokens import count_tokens

DEFAULT_BUDGET_TOKENS = 600
HEADS_CHUNK = 200  # one-line requests fetched per round trip when loading, at most
HEAD_TOKENS = 12  # fewer tokens than any one-line request takes, about
NO_END_SEQ = 2**62
_UNLOADED = 10**9  # the "full" cost of a request whose state lines were not loaded
# A request matches when one of its states (or its summary) scores at least this share of the
# best score; at most MAX_MATCHED requests are kept in full for matching.
MATCH_SHARE = 0.5
MAX_MATCHED = 8
# A word found in more than this share of the listed states does not make a state prefetched.
PREFETCH_WORD_SHARE = 0.2
_RENDERS_KEPT = 8  # renderings cached per query until the index changes
NO_PAST = "(no past requests yet)"

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
    folded_seqs: tuple[int, int] | None = None  # the same range by seq: every id in it opens
    # Listed states that a newer state supersedes, and by which: the stale ones.
    superseded: Mapping[str, str] = field(default_factory=dict)
    # Those of them whose newer state was forgotten or expired since: stale still, and
    # superseding them again is allowed (there is no newer state to supersede instead).
    superseder_removed: frozenset[str] = frozenset()

    @property
    def within_budget(self) -> bool:
        return self.tokens <= self.budget

    @property
    def empty(self) -> bool:
        """No past request at all (nothing listed, collapsed or folded)."""
        return not self.state_ids and not self.collapsed and self.text == NO_PAST


def state_line(state: IndexState) -> str:
    line = f"  {state.id} [{state.category.value}] {state.summary}"
    if state.content and state.content.strip() != state.summary.strip():
        line += f" content: {state.content}"  # short: no call needed to read it
    if state.superseded_by and state.superseder_removed:
        line += f"  (SUPERSEDED by {state.superseded_by}, {state.superseder_removed})"
    elif state.superseded_by:
        line += f"  (SUPERSEDED by {state.superseded_by})"
    return line


def _full_block(req: IndexRequest) -> str:
    # A request whose one state says what the request did is not said twice.
    said = len(req.states) == 1 and req.states[0].summary == req.summary
    head = f"{req.id}:" if said else f"{req.id}: {req.summary}"
    return "\n".join([head, *(state_line(s) for s in req.states)])


@dataclass(frozen=True)
class OlderRange:
    """Requests too old to show, not loaded at all: named by the folded line, by seq."""

    first_seq: int
    last_seq: int
    count: int


def _folded_line(
    reqs: list[IndexRequest], older: OlderRange | None = None, apart: Iterable[str] = ()
) -> str:
    """The range line for the folded `reqs` and the unloaded `older` ones; `apart` names the
    requests inside the range that are listed below it (matches of the request)."""
    first = ids.request_id(older.first_seq) if older else reqs[0].id
    last = reqs[-1].id if reqs else ids.request_id(older.last_seq if older else 0)
    n = len(reqs) + (older.count if older else 0)
    listed = ", ".join(apart)
    besides = f" (listed below: {listed})" if listed else ""
    return (
        f"{first}-{last}: {n} older requests, folded{besides}; access one of these request ids "
        "to list its states"
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
        self._rendered: dict[str, RenderedIndex] = {}  # by query
        self._words: dict[str, dict[str, list[str]]] = {}  # request id -> doc id -> words
        self.older: OlderRange | None = None  # requests below the loaded ones, not loaded
        # Requests from this seq on are all loaded with their state lines (0: every request).
        self.lines_below = 0
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
        """The namespace's index as a plan, reading only what it can show.

        The newest requests are read by their one-line form (id, summary, state count) until
        those lines would fill the budget; of these, the newest are read again with their
        state lines while they could all be listed in full (judged on a lower bound of each
        line's tokens, so none that could be listed is left out); everything older would fold
        into the range line anyway, so it is only counted, from the namespace's counts.
        Loading reads the same at any namespace size.
        """
        index = cls((), budget_tokens, model)
        heads: list[IndexRequest] = []
        before, lines_cost = NO_END_SEQ, 0
        # A one-line request takes a dozen tokens or more: about as many as the budget holds.
        size = min(HEADS_CHUNK, budget_tokens // HEAD_TOKENS + 1)
        while lines_cost <= budget_tokens:  # one line each, at most
            chunk = yield from ops.index_newest_heads(before, size)
            for req in chunk:
                heads.append(req)
                lines_cost += count_tokens(_collapsed_block(req), model) + 1
            if len(chunk) < size:
                before = 0  # nothing is older
                break
            before = chunk[-1].seq
        listable = _listable(heads, budget_tokens, model)
        if listable:
            top = heads[0].seq + 1  # the same newest requests the heads were read for
            for req in (yield from ops.index_newest(top, listable)):
                index.add(req)
            older = listable < len(heads) or before
            index.lines_below = heads[listable - 1].seq if older else 0
        for req in heads[listable:]:
            index.add(req)
        if before:
            count, first, last = yield from ops.index_older(before)
            if count:
                index.older = OlderRange(first, last, count)
        return index

    def load_matching(self, ops: Ops, query: str, committed: int) -> Plan[None]:
        """Load what `query` may need from beyond the loaded requests, so that the scorer
        ranks it and a match can be listed in full: the older requests whose states the
        full-text index finds for its words (at most MAX_MATCHED, one statement, not waiting
        for the index), and the state lines of loaded one-line requests whose summary matches.

        `committed` is the commit number the index is up to date with: requests committed
        later reach it by `apply_commit`, not here, so the range line's count stays exact.
        """
        wanted = words(query)
        if wanted and self.lines_below:
            plan = ops.index_candidates(
                wanted, MAX_MATCHED, below_seq=self.lines_below, upto_commit=committed
            )
            for found in (yield from plan):
                self._adopt(found)
        heads = [self._requests[i] for i in self.matching(query) if not self._requests[i].loaded]
        if heads:  # one round trip for all of them
            for loaded in (yield from ops.index_requests([req.seq for req in heads])):
                self.add(loaded)

    def _adopt(self, req: IndexRequest) -> None:
        """Add an older request found for a query; one the range line counted is taken out
        of its count (it is listed apart)."""
        older = self.older
        if req.id not in self._requests and older and older.first_seq <= req.seq <= older.last_seq:
            left = older.count - 1
            self.older = replace(older, count=left) if left else None
        self.add(req)

    @property
    def requests(self) -> list[IndexRequest]:
        return list(self._requests.values())

    def add(self, req: IndexRequest) -> None:
        last = next(reversed(self._requests.values()), None) if self._requests else None
        self._requests[req.id] = req
        if last is not None and last.seq > req.seq:  # loaded newest first, or committed late
            self._requests = dict(sorted(self._requests.items(), key=lambda kv: kv[1].seq))
        full = count_tokens(_full_block(req), self.model) if req.loaded else _UNLOADED
        self._cost[req.id] = (full, count_tokens(_collapsed_block(req), self.model))
        docs = {req.id: words(req.summary)}
        docs |= {s.id: words(state_text(s.id, s.summary)) for s in req.states}
        self._words[req.id] = docs
        self._rendered.clear()

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
            s.model_copy(update={"superseded_by": by, "superseder_removed": None})
            if s.id == state_id
            else s
            for s in req.states
        ]
        self.add(req.model_copy(update={"states": states}))

    def render(self, query: str | None = None) -> RenderedIndex:
        """The index as a prompt shows it for a request whose text is `query` (None: no
        request, recency alone decides)."""
        key = query or ""
        rendered = self._rendered.get(key)
        if rendered is None:
            if len(self._rendered) >= _RENDERS_KEPT:
                self._rendered.clear()
            rendered = self._rendered[key] = self._render(self.matching(key))
        return rendered

    def matching(self, query: str) -> list[str]:
        """Ids of the requests whose states or summary match `query`, best first."""
        docs = {doc: w for by_doc in self._words.values() for doc, w in by_doc.items()}
        ranked = rank_words(query, docs) if query else []
        if not ranked:
            return []
        floor = ranked[0][1] * MATCH_SHARE
        found = dict.fromkeys(ids.request_of(i) for i, score in ranked if score >= floor)
        return list(found)[:MAX_MATCHED]

    def best_states(self, query: str, k: int) -> list[str]:
        """Up to `k` current states the index lists for `query` that match it best (at least
        MATCH_SHARE of the best score): what an agent may open before its first call."""
        if k <= 0 or not query:
            return []
        shown = self.render(query).state_ids
        # A state whose content its index line shows is read already.
        current = {
            s.id
            for r in self._requests.values()
            for s in r.states
            if not s.superseded_by and s.content is None
        }
        docs = {
            doc: w
            for by_doc in self._words.values()
            for doc, w in by_doc.items()
            if doc in shown and doc in current
        }
        # Opening costs tokens at every call of the request: only words that tell states
        # apart count (a word most states share, "hotel" in a trip's memory, says nothing).
        seen = Counter(w for toks in docs.values() for w in set(toks))
        common = {w for w, n in seen.items() if n > max(1, len(docs) * PREFETCH_WORD_SHARE)}
        kept = " ".join(w for w in words(query) if w not in common)
        ranked = rank_words(kept, docs) if kept else []
        floor = ranked[0][1] * MATCH_SHARE if ranked else 0.0
        return [doc for doc, score in ranked if score >= floor][:k]

    def _render(self, matched: list[str]) -> RenderedIndex:
        pinned = self._pinned(matched)
        # The others, oldest first: they collapse, then fold, oldest first.
        order = [r for r in self._requests.values() if r.id not in pinned]
        collapsed: set[str] = {r.id for r in order if not r.loaded}
        folded = 0  # how many of the oldest others fold into the range line
        # Plan on per-request costs (cheap), then confirm on the exact text.
        estimate = sum(self._cost[r.id][0] + 1 for r in self._requests.values())
        for req in order:
            if estimate <= self.budget:
                break
            full, short = self._cost[req.id]
            estimate -= full - short
            collapsed.add(req.id)
        older = self.older
        range_cost = count_tokens(_folded_line(order[:1], older), self.model) + 4 if order else 0
        if older is not None:
            estimate += range_cost  # the range line is there whatever else folds
        # Even the newest request may fold (long summaries, a small budget): the budget holds,
        # and the range line still names every request, so each can be opened.
        while estimate > self.budget and folded < len(order):
            estimate -= self._cost[order[folded].id][1] + 1
            folded += 1
            if folded == 1 and older is None:
                estimate += range_cost
        text, tokens = self._text(order, pinned, collapsed, folded)
        while tokens > self.budget and (folded < len(order) or pinned):
            if folded == len(order):  # the pinned ones alone are too long: give the last up
                order = sorted([*order, self._requests[pinned.pop()]], key=lambda r: r.seq)
            grow = max(1, len(order) // 50)  # the estimate was a little low: fold a bit more
            collapsed.update(r.id for r in order)
            folded = min(len(order), folded + grow)
            text, tokens = self._text(order, pinned, collapsed, folded)
        collapsed.update(r.id for r in order[:folded])
        shown = [s for r in self._requests.values() if r.id not in collapsed for s in r.states]
        # "(SUPERSEDED by r6.x)" shows r6.x too: what was shown can be opened (not a removed
        # one: only its id is left).
        listed = frozenset(s.id for s in shown)
        listed |= {s.superseded_by for s in shown if s.superseded_by and not s.superseder_removed}
        seqs = _span(order[:folded], older)
        span = (ids.request_id(seqs[0]), ids.request_id(seqs[1])) if seqs else None
        stale = {s.id: s.superseded_by for s in shown if s.superseded_by}
        gone = frozenset(s.id for s in shown if s.superseder_removed)
        return RenderedIndex(
            text, tokens, self.budget, frozenset(collapsed), listed, span, seqs, stale, gone
        )

    def _pinned(self, matched: list[str]) -> list[str]:
        """The matching requests listed in full whatever else folds, best first, as many as
        the budget holds (keeping room for the range line)."""
        room = self.budget - 40
        pinned: list[str] = []
        for rid in matched:
            cost = self._cost[rid][0] + 1
            if cost <= room:
                pinned.append(rid)
                room -= cost
        return pinned

    def _text(
        self, order: list[IndexRequest], pinned: list[str], collapsed: set[str], folded: int
    ) -> tuple[str, int]:
        """The range line for the first `folded` of `order`, then every other request in
        request order: the pinned ones in full, the rest collapsed or in full."""
        if not self._requests and self.older is None:
            return NO_PAST, count_tokens(NO_PAST, self.model)
        gone = {r.id for r in order[:folded]}
        older = self.older
        span = _span(order[:folded], older)
        apart = [
            r.id
            for r in self._requests.values()
            if span and r.id not in gone and span[0] <= r.seq <= span[1]
        ]
        lines = [_folded_line(order[:folded], older, apart)] if folded or older else []
        for r in self._requests.values():
            if r.id in gone:
                continue
            short = r.id in collapsed and r.id not in pinned
            lines.append(_collapsed_block(r) if short else _full_block(r))
        text = "\n".join(lines)
        return text, count_tokens(text, self.model)


def _listable(heads: list[IndexRequest], budget: int, model: str | None) -> int:
    """How many of `heads` (newest first) to read with their state lines: those that could
    all be listed in full within `budget`, and one more (as a render finds out). Each state
    line costs at least as many tokens as the shortest line its request could have, less a
    margin for how a tokenizer may merge the longer text."""
    cost = 0
    for n, req in enumerate(heads, start=1):
        shortest = count_tokens(f"  {req.id}.a [x] a", model) - 2
        cost += count_tokens(f"{req.id}: ", model) + req.n_states * max(1, shortest) + 1
        if cost > budget:
            return n
    return len(heads)


def _span(folded: list[IndexRequest], older: OlderRange | None) -> tuple[int, int] | None:
    """The folded line's first and last seq: the unloaded older requests and the folded
    loaded ones."""
    if not folded and older is None:
        return None
    first = older.first_seq if older else folded[0].seq
    last = folded[-1].seq if folded else older.last_seq  # type: ignore[union-attr]
    return first, last


def _in_seq_order(requests: list[IndexRequest]) -> list[IndexRequest]:
    return sorted(requests, key=lambda r: r.seq)
