"""A LangGraph `BaseStore` over one FlowState namespace, so that LangMem and code written for the
store keep working, and what they put becomes states the agent's index lists.

    store = FlowStateStore(fs)      # bound to its namespace for good (FlowState or AsyncFlowState)
    store.put(("users", "123"), "prefs", {"theme": "dark"})
    store.get(("users", "123"), "prefs").value       # {'theme': 'dark'}

An item is a state. Its key is `kv_<10 hex>_<12 hex>`: `kv_`, the first 10 hex digits of the
SHA-256 of the namespace tuple (as JSON), `_`, and the first 12 of the SHA-256 of the tuple and
the key: a namespace tuple is the key prefix `kv_<10 hex>_` inside the FlowState namespace, and
never another FlowState namespace. Its content is JSON, `{"namespace": [...], "key": ...,
"value": {...}}` (checked on every read), its summary `users/123/prefs: {"theme":"dark"}` (cut
at 300 characters), its category `environment` unless the store was made with another.

A batch runs its reads first, then its writes (as LangGraph's `InMemoryStore` does), the last
op of a key winning: the puts are one request, committed in one transaction, each new state
superseding the key's current one (read again, and the commit tried again, when another writer
put the key meanwhile); a delete forgets the key's current state. Reads see current states
only. A search's `query` is FlowState's full-text search (best first, at most 50 hits
read), not a vector search: an `index` passed to `put` is ignored.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import random
import time
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from flowstate.api import FlowState
from flowstate.async_api import AsyncFlowState
from flowstate.engine.agent import AgentConfig
from flowstate.engine.async_session import AsyncSession
from flowstate.engine.relevance import words
from flowstate.engine.session import Session
from flowstate.errors import NotFoundError, UsageError
from flowstate.models import Category
from flowstate.models.records import MAX_CONTENT_CHARS, MAX_SUMMARY_CHARS, StateNode

PREFIX = "kv_"
WRITE_ATTEMPTS = 30  # a put that loses a race reads again and retries; writers take turns
SEARCH_HITS = 50  # the most full-text hits a query reads
Where = tuple[tuple[str, ...], str]  # an item's namespace and key
Current = dict[Where, tuple[StateNode, Item]]  # each item and the state that holds it


def namespace_prefix(namespace: Sequence[str]) -> str:
    """The key prefix of a namespace tuple's items: `kv_` and 10 hex digits, then `_`."""
    digest = hashlib.sha256(json.dumps(list(namespace)).encode()).hexdigest()
    return f"{PREFIX}{digest[:10]}_"


def state_key(namespace: Sequence[str], key: str) -> str:
    """The FlowState state key of the item `key` in `namespace`."""
    digest = hashlib.sha256(json.dumps([list(namespace), key]).encode()).hexdigest()
    return namespace_prefix(namespace) + digest[:12]


@dataclass(frozen=True)
class _Read:
    prefixes: tuple[str, ...]  # the current states whose keys start with one of them


@dataclass(frozen=True)
class _Find:
    query: str  # a full-text search


@dataclass(frozen=True)
class _Commit:
    text: str
    summary: str
    shown: tuple[str, ...]  # the states it supersedes, as this store read them
    delta: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class _Forget:
    state_id: str


class Hit(Protocol):
    """A full-text hit, as `fs.search` gives it."""

    id: str
    score: float


@dataclass(frozen=True)
class _Pause:
    seconds: float  # writers racing for one key take turns


Need = _Read | _Find | _Commit | _Forget | _Pause
# A batch's steps: they yield what they need done and get its answer (or, for a refused
# commit, its UsageError thrown in); `batch` and `abatch` do the I/O.
Steps = Generator[Need, Any, list[Result]]


class FlowStateStore(BaseStore):
    """LangGraph's store over the namespace of `fs`, a `FlowState` or an `AsyncFlowState` (see
    the module's docstring). With a `FlowState`, `abatch` runs the batch in a worker thread;
    with an `AsyncFlowState`, only `abatch` (and `aget`, `aput`, ...) work, on its loop."""

    def __init__(
        self, fs: FlowState | AsyncFlowState, *, category: Category | str = Category.ENVIRONMENT
    ) -> None:
        if not isinstance(fs, FlowState | AsyncFlowState):
            raise UsageError(
                f"FlowStateStore takes a FlowState or an AsyncFlowState, not {type(fs).__name__}"
            )
        if category not in set(Category):
            raise UsageError(f"category must be one of {', '.join(Category)}, not {category!r:.40}")
        self.fs = fs
        self.category = Category(category)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        fs = self.fs
        if not isinstance(fs, FlowState):
            raise UsageError("a store over an AsyncFlowState is used with await: abatch, aget, ...")
        steps, error = self._steps(ops), None
        answer: Any = None
        while True:
            try:
                need = steps.throw(error) if error else steps.send(answer)
            except StopIteration as done:
                return done.value
            answer, error = None, None
            try:
                if isinstance(need, _Read):
                    answer = self._read_states(need.prefixes)
                elif isinstance(need, _Find):
                    answer = fs.search(need.query, SEARCH_HITS)
                elif isinstance(need, _Forget):
                    with contextlib.suppress(NotFoundError):  # forgotten meanwhile: gone
                        fs.forget(need.state_id)
                elif isinstance(need, _Pause):
                    time.sleep(need.seconds)
                else:
                    _commit(fs.begin(need.text, config=_config(need)), need)
            except UsageError as e:
                error = e

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        fs = self.fs
        if isinstance(fs, FlowState):
            return await asyncio.to_thread(self.batch, list(ops))
        steps, error = self._steps(ops), None
        answer: Any = None
        while True:
            try:
                need = steps.throw(error) if error else steps.send(answer)
            except StopIteration as done:
                return done.value
            answer, error = None, None
            try:
                if isinstance(need, _Read):
                    answer = [s for p in need.prefixes for s in await fs.current_states(p)]
                elif isinstance(need, _Find):
                    answer = await fs.search(need.query, SEARCH_HITS)
                elif isinstance(need, _Forget):
                    with contextlib.suppress(NotFoundError):
                        await fs.forget(need.state_id)
                elif isinstance(need, _Pause):
                    await asyncio.sleep(need.seconds)
                else:
                    await _acommit(await fs.begin(need.text, config=_config(need)), need)
            except UsageError as e:
                error = e

    def _read_states(self, prefixes: Sequence[str]) -> list[StateNode]:
        assert isinstance(self.fs, FlowState)
        return [state for prefix in prefixes for state in self.fs.current_states(prefix)]

    # --- the steps of a batch, without I/O ------------------------------------------------------

    def _steps(self, ops: Iterable[Op]) -> Steps:
        """Reads first, then writes, the last op of a key winning (as `InMemoryStore`)."""
        ops = list(ops)
        writes: dict[Where, PutOp] = {}
        for op in ops:
            if not isinstance(op, GetOp | SearchOp | ListNamespacesOp | PutOp):
                raise UsageError(f"unknown store operation {type(op).__name__}")
            if isinstance(op, PutOp):
                writes[(tuple(op.namespace), op.key)] = op
        contents = {k: _content(*k, op.value) for k, op in writes.items() if op.value is not None}
        items = _current((yield _Read(tuple(_prefixes(ops)))))
        results: list[Result] = []
        for op in ops:
            hits = None
            if isinstance(op, SearchOp) and op.query and words(op.query):
                hits = yield _Find(op.query)
            results.append(_read(op, items, hits))
        if contents:
            yield from self._put(contents, items)
        for where, op in writes.items():
            current = items.get(where)
            if op.value is None and current is not None:
                yield _Forget(current[0].id)
        return results

    def _put(self, contents: dict[Where, str], items: Current) -> Generator[Need, Any, None]:
        """The batch's puts as one request, each new state superseding its key's current one,
        the last put of a key winning as in LangGraph's stores. Another writer that put one of
        these keys since they were read has the commit refused whole (a state is superseded
        once): the keys are read again and what is current then superseded. A writer that put
        a key with no current value meanwhile added one too (nothing conflicted): the put that
        commits last sees both and adds its value again over them."""
        spaces = tuple(sorted({namespace_prefix(ns) for ns, _ in contents}))
        supersede = _ids(items)
        for attempt in range(WRITE_ATTEMPTS):
            if attempt:  # a random pause, longer each time, so racing writers take turns
                yield _Pause(random.uniform(0, 0.02 * 2 ** min(attempt, 5)))
            try:
                yield self._request(contents, supersede)
            except UsageError:
                held = _held((yield _Read(spaces)))
                now = {k: held.get(k, []) for k in contents}
                if all(sorted(now[k]) == sorted(supersede.get(k, [])) for k in contents):
                    raise  # refused for what the put holds, not for another writer
                supersede = now
                continue
            held = _held((yield _Read(spaces)))
            doubled = {k: held[k] for k in contents if len(held.get(k, ())) > 1}
            if not doubled:
                return
            contents, supersede = {k: contents[k] for k in doubled}, doubled
        raise UsageError(
            f"the put of {len(contents)} item(s) lost {WRITE_ATTEMPTS} races to other writers "
            "of the same keys; nothing more of it was stored"
        )

    def _request(self, contents: dict[Where, str], supersede: dict[Where, list[str]]) -> _Commit:
        delta, shown = [], []
        for where, content in contents.items():
            add: dict[str, Any] = {
                "op": "add",
                "key": state_key(*where),
                "category": self.category.value,
                "summary": _summary(where, content),
                "content": content,
            }
            if supersede.get(where):
                add["relations"] = [{"type": "SUPERSEDES", "target": i} for i in supersede[where]]
                shown += supersede[where]
            delta.append(add)
        spaces = sorted({"/".join(ns) for ns, _ in contents})
        said = f"LangGraph store: put {len(delta)} item(s) in {', '.join(spaces)}"
        summary = " ".join(said.split())[:MAX_SUMMARY_CHARS]
        return _Commit(said[:10_000], summary, tuple(shown), tuple(delta))


def _config(need: _Commit) -> AgentConfig:
    """The request's limits sized for the batch: a step's defaults (20 ops, a 200-character
    summary, 4,000 characters of content) are for a model's steps, while a batch puts any
    number of items, each its summary line and a value up to a state's content limit."""
    ops = max(1, len(need.delta))
    return AgentConfig.model_validate(
        {
            "limits": {
                "max_ops_per_step": ops,
                "max_states_per_request": ops,
                "max_summary_chars": MAX_SUMMARY_CHARS,
                "max_content_chars": MAX_CONTENT_CHARS,
            }
        }
    )


def _commit(session: Session, need: _Commit) -> None:
    """One request for a batch's puts; discarded when any of it is refused."""
    with session:
        try:
            if need.shown:  # read by this store, as a host's search shows a state
                session.shown(need.shown)
            recorded = session.record(need.delta)
            if not recorded.applied:
                raise UsageError("; ".join(recorded.rejections))
            session.commit("stored", need.summary)
        except BaseException:
            if not session.closed:
                session.discard()
            raise


async def _acommit(session: AsyncSession, need: _Commit) -> None:
    async with session:
        try:
            if need.shown:
                await session.shown(need.shown)
            recorded = await session.record(need.delta)
            if not recorded.applied:
                raise UsageError("; ".join(recorded.rejections))
            await session.commit("stored", need.summary)
        except BaseException:
            if not session.closed:
                await session.discard()
            raise


def _ids(items: Current) -> dict[Where, list[str]]:
    return {where: [state.id] for where, (state, _) in items.items()}


def _held(states: list[StateNode]) -> dict[Where, list[str]]:
    """Every current state of each (namespace, key): more than one where two writers raced."""
    found: dict[Where, list[str]] = {}
    for state in states:
        item = _item(state)
        if item is not None:
            found.setdefault((item.namespace, item.key), []).append(state.id)
    return found


def _current(states: list[StateNode]) -> Current:
    """The items these states hold, by (namespace, key), oldest first."""
    found = {}
    for state in states:
        item = _item(state)
        if item is not None:
            found[(item.namespace, item.key)] = (state, item)
    return found


def _read(op: Op, items: Current, hits: Sequence[Hit] | None) -> Result:
    if isinstance(op, GetOp):
        kept = items.get((tuple(op.namespace), op.key))
        return kept[1] if kept else None
    if isinstance(op, SearchOp):
        return _search(op, [item for _, item in items.values()], hits)
    if isinstance(op, ListNamespacesOp):
        return _namespaces(op, {item.namespace for _, item in items.values()})
    return None


def _search(op: SearchOp, items: list[Item], hits: Sequence[Hit] | None) -> list[SearchItem]:
    """Filtered as `InMemoryStore` filters; with full-text `hits`, only those, best first."""
    n = len(op.namespace_prefix)
    kept = [
        item
        for item in items
        if item.namespace[:n] == tuple(op.namespace_prefix)
        and all(_matches(item.value.get(k), v) for k, v in (op.filter or {}).items())
    ]
    scores: dict[str, float] = {}
    if hits is not None:
        scores = {h.id.split(".", 1)[1]: h.score for h in hits if h.id.count(".") == 1}
        by_key = {state_key(i.namespace, i.key): i for i in kept}
        ranked = sorted((k for k in scores if k in by_key), key=lambda k: -scores[k])
        kept = [by_key[k] for k in ranked]
    return [
        SearchItem(
            namespace=i.namespace,
            key=i.key,
            value=i.value,
            created_at=i.created_at,
            updated_at=i.updated_at,
            score=scores.get(state_key(i.namespace, i.key)),
        )
        for i in kept[op.offset : op.offset + op.limit]
    ]


def _prefixes(ops: list[Op]) -> list[str]:
    """The key prefixes a batch reads: its gets' and puts' namespaces only, unless it searches
    or lists (then every item)."""
    if any(isinstance(op, SearchOp | ListNamespacesOp) for op in ops):
        return [PREFIX]
    return sorted({namespace_prefix(op.namespace) for op in ops if isinstance(op, GetOp | PutOp)})


def _id(kept: tuple[StateNode, Item] | None) -> str | None:
    return kept[0].id if kept else None


def _content(namespace: tuple[str, ...], key: str, value: Any) -> str:
    """An item's state content; UsageError (before anything is written) when it cannot be."""
    if not isinstance(value, dict):
        raise UsageError(f"a store value is a dict, not {type(value).__name__}")
    try:
        text = json.dumps(
            {"namespace": list(namespace), "key": key, "value": value},
            ensure_ascii=False,
            separators=(",", ":"),
        )
    except (TypeError, ValueError) as e:
        raise UsageError(f"the value of {key!r:.60} is not JSON: {e}") from e
    if len(text) > MAX_CONTENT_CHARS:
        raise UsageError(
            f"the value of {key!r:.60} is {len(text)} characters as JSON; a state holds at most "
            f"{MAX_CONTENT_CHARS}"
        )
    return text


def _summary(where: Where, content: str) -> str:
    """`users/123/prefs: {"theme":"dark"}` on one line, cut to the summary's limit."""
    namespace, key = where
    value = json.dumps(json.loads(content)["value"], ensure_ascii=False, separators=(",", ":"))
    line = " ".join(f"{'/'.join([*namespace, key])}: {value}".split())
    if len(line) > MAX_SUMMARY_CHARS:
        line = line[: MAX_SUMMARY_CHARS - 1] + "…"
    return line


def _item(state: StateNode) -> Item | None:
    """The item a state holds; None for a state with the prefix that this store did not write
    (its content is not an item, or its key is not the item's)."""
    try:
        said = json.loads(state.content)
        namespace, key, value = tuple(said["namespace"]), said["key"], said["value"]
    except (ValueError, TypeError, KeyError):
        return None
    if not isinstance(value, dict) or state.key != state_key(namespace, key):
        return None
    stamp: datetime = state.created_at
    return Item(value=value, key=key, namespace=namespace, created_at=stamp, updated_at=stamp)


def _namespaces(op: ListNamespacesOp, namespaces: set[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """As LangGraph's in-memory store lists them: matched, cut to `max_depth`, sorted, paged."""
    found = [ns for ns in namespaces if all(_fits(c, ns) for c in op.match_conditions or ())]
    if op.max_depth is not None:
        found = list({ns[: op.max_depth] for ns in found})
    return sorted(found)[op.offset : op.offset + op.limit]


def _fits(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise UsageError(f"unknown match type {condition.match_type!r}")
    return all(p == "*" or n == p for n, p in pairs)


def _matches(value: Any, wanted: Any) -> bool:
    """A filter as LangGraph's in-memory store applies it: equality (nested dicts and lists
    element by element) and the operators $eq, $ne, $gt, $gte, $lt, $lte."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, k, v) for k, v in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_matches(a, b) for a, b in zip(value, wanted, strict=False))
        )
    return bool(value == wanted)


def _operator(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(value == operand)
    if operator == "$ne":
        return bool(value != operand)
    compare = {
        "$gt": float.__gt__,
        "$gte": float.__ge__,
        "$lt": float.__lt__,
        "$lte": float.__le__,
    }.get(operator)
    if compare is None:
        raise UsageError(f"unsupported filter operator {operator!r}")
    return bool(compare(float(value), float(operand)))
