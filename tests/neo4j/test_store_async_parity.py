"""Forgetting, retention, export and import through `AsyncRepository` do what they do through
`Repository`: two namespaces filled alike, one operation each way, the same answer and the
same graph left behind."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest

from flowstate import AsyncFlowState, FlowState
from flowstate.errors import (
    FlowStateError,
    NamespaceBusy,
    NotFoundError,
    UsageError,
    ValidationFailed,
)
from flowstate.models import Category, RelationType
from flowstate.safety.retention import RetentionPolicy, apply_retention
from flowstate.store import AsyncRepository, Repository
from flowstate.store.forgetting import NamespaceContents
from flowstate.store.reading import GraphCounts, Removal
from tests.neo4j.conftest import Factory
from tests.neo4j.engine_helpers import Shell
from tests.neo4j.store_helpers import decision, with_decisions

pytestmark = pytest.mark.neo4j

OLD = datetime(2024, 1, 10, 12, 0, tzinfo=UTC)
CUT = datetime(2024, 6, 1, tzinfo=UTC)
NEW = datetime(2024, 12, 24, 8, 0, tzinfo=UTC)
# An interrupted request that opened r1.weather and listed r2's state lines.
DRAFT = {
    "step": 2,
    "revealed": {"r1.weather": {"state": {}, "relations": []}, "r2.hotel": {}},
    "opened_requests": {"r2": [{"id": "r2.hotel"}]},
    "pending_access": ["r1.weather"],
}


def _fill(repo: Repository, make: Factory) -> None:
    env, pref = Category.ENVIRONMENT, Category.PREFERENCE
    repo.commit(
        make.bundle(
            1,
            states=[
                make.state("r1", "weather", env, created_at=OLD, updated_at=OLD),
                make.state("r1", "seat", pref, created_at=OLD, updated_at=OLD),
            ],
            observations=[
                make.observation("r1", 1, created_at=OLD),
                make.observation("r1", 2, created_at=NEW),
            ],
            evidence=[("r1.weather", "r1.o1"), ("r1.seat", "r1.o2")],
        )
    )
    repo.commit(
        with_decisions(
            make.bundle(
                2,
                states=[make.state("r2", "hotel", env, created_at=NEW, updated_at=NEW)],
                relations=[(RelationType.DERIVED_FROM, "r2.hotel", "r1.weather")],
            ),
            decision(make, "r2", 1, cites=["r1.weather", "r2.hotel"]),
        )
    )
    repo.save_draft("r3", json.dumps(DRAFT), owner="gone-host:1:dead", hold_s=1, first=True)
    repo.run(repo.ops.release_hold("r3", "gone-host:1:dead"))  # interrupted, not running


@pytest.fixture
def twins(
    repo: Repository, other_repo: Repository, async_shell: Shell
) -> tuple[Repository, AsyncRepository, Shell]:
    """The sync repository, and the async one over a namespace filled alike."""
    assert async_shell.store is not None
    _fill(repo, Factory(repo.namespace))
    _fill(other_repo, Factory(other_repo.namespace))
    return repo, AsyncRepository(async_shell.store, other_repo.namespace), async_shell


def _left(repo: Repository) -> dict[str, Any]:
    """What the namespace holds, without its name: counts, the export, drafts, the counter."""
    stamp = repo.stamp()
    return {
        "counts": repo.counts(),
        "export": list(repo.export_jsonl()),
        "drafts": {r.request_id: r.payload for r in repo.open_requests()},
        "next_seq": repo.next_request_seq(),
        "stamped": (stamp.epoch is not None, stamp.generation),
    }


@dataclass(frozen=True)
class Refused:
    """An operation's expected refusal: its class, and words of its message ("NS" for the
    namespace's name)."""

    kind: type[FlowStateError]
    says: str


def _both(
    twins: tuple[Repository, AsyncRepository, Shell],
    op: Callable[[Any], Any],
    *,
    front_door: bool = False,
) -> Any:
    """Run `op` on each twin (or on a `FlowState` and an `AsyncFlowState` over them); assert
    the same answer (or refusal) and the same graph left; the answer (or (class, message))."""
    sync, arepo, shell = twins
    one: Any = FlowState(sync._store, sync.namespace) if front_door else sync
    other: Any = AsyncFlowState(arepo._store, arepo.namespace) if front_door else arepo
    seen: list[Any] = []
    for run in (lambda: op(one), lambda: shell.wait(op(other))):
        try:
            seen.append(_nameless(run()))
        except FlowStateError as refused:
            text = str(refused).replace(arepo.namespace, "NS").replace(sync.namespace, "NS")
            seen.append((type(refused), text))
    assert seen[0] == seen[1]
    assert _left(sync) == _left(Repository(sync._store, arepo.namespace))
    return seen[0]


def _expected(answer: Any, expected: Any) -> None:
    """The answer is what the operation promises: the value, the refusal, or the export's
    records (kind and id, in order)."""
    if isinstance(expected, Refused):
        assert isinstance(answer, tuple) and answer[0] is expected.kind, answer
        assert expected.says in answer[1], answer
    elif isinstance(expected, list):
        records = [json.loads(line) for line in answer]
        assert [(r["kind"], r.get("id", r.get("state"))) for r in records] == expected
    else:
        assert answer == expected


def _nameless(answer: Any) -> Any:
    """The answer as a value to compare: an export read out, a namespace's name left out."""
    if isinstance(answer, Iterator):
        return list(answer)
    if isinstance(answer, NamespaceContents):
        return answer.model_copy(update={"namespace": "NS"})
    return answer


# What `_fill` writes, as an export lists it.
EXPORTED = [
    ("request", "r1"),
    ("state", "r1.seat"),
    ("state", "r1.weather"),
    ("observation", "r1.o1"),
    ("observation", "r1.o2"),
    ("evidence", "r1.seat"),
    ("evidence", "r1.weather"),
    ("request", "r2"),
    ("state", "r2.hotel"),
    ("relation", None),
    ("decision", "r2.a1"),
]
# A request line that parses, for an import into a namespace that holds one already.
REQUEST_LINE = '{"kind":"request","id":"r1","seq":1,"text":"t","summary":"s","outcome":"answered"}'
ENV, GONE = Category.ENVIRONMENT, "not found in namespace 'NS'"
NOTHING_LEFT: dict[str, Any] = {"superseded": {}, "dependents": {}}  # a removal leaving no mark

# Each operation, and what it answers on `_fill`'s namespace (r1: weather and seat, o1 old
# and o2 new; r2: hotel derived from r1.weather, decision r2.a1 citing both; r3 interrupted).
OPERATIONS: dict[str, tuple[Callable[[Any], Any], Any]] = {
    # r1, its 2 states and 2 observations; PRODUCED x4, EVIDENCED_BY x2, NEXT, r2.hotel's
    # DERIVED_FROM and r2.a1's citation of r1.weather
    "forget a request": (
        lambda r: r.forget_request("r1"),
        Removal(nodes=5, relationships=9, dependents={"r2.hotel": ["DERIVED_FROM r1.weather"]}),
    ),
    # r1.weather; its PRODUCED and EVIDENCED_BY, r2.hotel's DERIVED_FROM, r2.a1's citation
    "forget a state": (
        lambda r: r.forget_state("r1.weather"),
        Removal(nodes=1, relationships=4, dependents={"r2.hotel": ["DERIVED_FROM r1.weather"]}),
    ),
    # r2, r2.hotel, r2.a1; PRODUCED, NEXT, DERIVED_FROM, and the decision's 3 links
    "forget by id": (lambda r: r.forget("r2"), Removal(nodes=3, relationships=6)),
    "forget a missing id": (
        lambda r: r.forget_state("r9.nothing"),
        Refused(NotFoundError, f"{GONE}: r9.nothing"),
    ),
    "forget what is not an id": (
        lambda r: r.forget("hotel"),
        Refused(UsageError, "'hotel' is neither a request id"),
    ),
    "what forgetting all would delete": (
        lambda r: r.whole_namespace(),
        NamespaceContents(namespace="NS", requests=2, interrupted=["r3"], nodes=9),
    ),
    "forget the namespace": (
        lambda r: r.forget_namespace(),
        GraphCounts(nodes=9, relationships=12),
    ),
    # r1.weather only: r2.hotel is newer than the cutoff
    "expire a category": (
        lambda r: r.expire(ENV, CUT),
        Removal(nodes=1, relationships=4, dependents={"r2.hotel": ["DERIVED_FROM r1.weather"]}),
    ),
    "expire observations": (
        lambda r: r.expire("observation", CUT),
        Removal(nodes=1, relationships=2),
    ),
    "expire with a naive cutoff": (
        lambda r: r.expire("observation", datetime(2024, 6, 1)),
        Refused(ValidationFailed, "needs a timezone-aware datetime"),
    ),
    "preview retention": (
        lambda r: r.expiring({ENV: CUT, "observation": NEW}),
        {"environment": 1, "observation": 1},
    ),
    "apply a policy": (
        lambda r: r.run(
            apply_retention(r.ops, RetentionPolicy(days={"observation": 0, "preference": 0}))
        ),
        {
            "observation": {"nodes": 2, "relationships": 4, **NOTHING_LEFT},
            "preference": {"nodes": 1, "relationships": 1, **NOTHING_LEFT},
        },
    ),
    "export": (lambda r: r.export_jsonl(), EXPORTED),
    "import into a namespace that is not empty": (
        lambda r: r.import_jsonl([REQUEST_LINE]),
        Refused(ValidationFailed, "namespace 'NS' is not empty (9 nodes)"),
    ),
}


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_the_async_repository_does_what_the_sync_one_does(twins, name: str) -> None:  # noqa: ANN001
    op, expected = OPERATIONS[name]
    _expected(_both(twins, op), expected)


FRONT_DOOR: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "forget by id": (
        lambda fs: fs.forget("r1.weather"),
        Removal(nodes=1, relationships=4, dependents={"r2.hotel": ["DERIVED_FROM r1.weather"]}),
    ),
    "forget what is not an id": (
        lambda fs: fs.forget("r1.o1"),
        Refused(UsageError, "'r1.o1' is neither"),
    ),
    # r1.weather and r2.hotel, with their edges
    "apply a policy": (
        lambda fs: fs.apply_retention(RetentionPolicy(days={"environment": 0})),
        {"environment": {"nodes": 2, "relationships": 6, **NOTHING_LEFT}},
    ),
    "preview a policy": (
        lambda fs: fs.expiring(RetentionPolicy(days={"observation": 200})),
        {"observation": 2},
    ),
    "export": (lambda fs: fs.export_jsonl(), EXPORTED),
    "import": (lambda fs: fs.import_jsonl([]), GraphCounts(nodes=0, relationships=0)),
}


@pytest.mark.parametrize("name", list(FRONT_DOOR))
def test_the_async_front_door_does_what_the_sync_one_does(twins, name: str) -> None:  # noqa: ANN001
    op, expected = FRONT_DOOR[name]
    _expected(_both(twins, op, front_door=True), expected)


def test_the_sync_and_the_async_results_are_what_the_operations_promise(twins) -> None:  # noqa: ANN001
    sync, _, _ = twins
    deleted = _both(twins, lambda r: r.forget_request("r1"))
    # r1, its 2 states and 2 observations; PRODUCED x4, EVIDENCED_BY x2, NEXT, r2.hotel's
    # DERIVED_FROM and r2.a1's citation of r1.weather
    assert (deleted.nodes, deleted.relationships) == (5, 9)
    [draft] = sync.open_requests()  # and the async twin's the same (`_left`)
    assert json.loads(draft.payload)["revealed"] == {"r2.hotel": {}}  # r1's copy scrubbed
    refused = _both(twins, lambda r: r.forget_state("r1.seat"))
    assert refused[0] is NotFoundError
    assert list(_both(twins, lambda r: r.export_jsonl())) == list(sync.export_jsonl())


def test_an_export_imports_the_same_through_both(twins, namespace: str) -> None:  # noqa: ANN001
    sync, arepo, shell = twins
    lines = list(sync.export_jsonl())
    copies = (Repository(sync._store, f"{namespace}_c1"), f"{namespace}_c2")
    acopy = AsyncRepository(arepo._store, copies[1])
    try:
        made = copies[0].import_jsonl(lines)
        assert made == shell.wait(acopy.import_jsonl(lines)) and made.nodes == 8
        assert _left(copies[0]) == _left(Repository(sync._store, copies[1]))
        with pytest.raises(ValidationFailed, match="line 1: not JSON"):
            shell.wait(acopy.import_jsonl(["{nope"]))
    finally:
        copies[0].forget_namespace(force=True)
        Repository(sync._store, copies[1]).forget_namespace(force=True)


def test_forgetting_a_busy_namespace_is_refused_through_both(twins) -> None:  # noqa: ANN001
    sync, arepo, _ = twins
    for repo in (sync, Repository(sync._store, arepo.namespace)):
        repo.save_draft("r4", "{}", owner="live-host:7:beef", first=True)
    refused = _both(twins, lambda r: r.forget_namespace())
    assert refused[0] is NamespaceBusy and "writer live-host:7:beef runs request r4" in refused[1]
    assert _both(twins, lambda r: r.whole_namespace())[0] is NamespaceBusy
    forced = _both(twins, lambda r: r.forget_namespace(force=True))
    assert forced.nodes == 10  # 8 committed nodes and the drafts of r3 and r4
    assert sync.counts().nodes == 0 and sync.stamp().epoch is None
