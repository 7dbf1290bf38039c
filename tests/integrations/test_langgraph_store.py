"""LangGraph's `BaseStore` conformance, against FlowState's store on a real Neo4j and, as the
control that each check holds LangGraph's own behaviour (and can fail), against LangGraph's
`InMemoryStore`.

The behaviours are those LangGraph's tests check on its stores (its repository's tests as of
August 2026: libs/checkpoint/tests/test_store.py for `InMemoryStore`, and the batch, search and
namespace tests its SQLite and Postgres stores share), minus vector search; the installed
`langgraph-checkpoint` 4.3.2's `InMemoryStore` passes every one of them here:
put, get, update, delete, search with filters and pagination, list_namespaces with prefix,
suffix, wildcards, max_depth, limit and offset, namespace validation, batch and abatch. Written
here, not copied. Then what only FlowState's store promises: a put supersedes, a delete
forgets, and nothing crosses into a neighbouring FlowState namespace.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from flowstate import AsyncFlowState, FlowState, UsageError
from flowstate.integrations.langgraph_store import FlowStateStore, namespace_prefix, state_key
from flowstate.settings import Neo4jSettings

pytestmark = pytest.mark.neo4j


@pytest.fixture(params=["flowstate", "in_memory"])
def store(request: pytest.FixtureRequest) -> Iterator[BaseStore]:
    if request.param == "in_memory":
        yield InMemoryStore()
    else:
        yield FlowStateStore(request.getfixturevalue("fs"))


def items(result: object) -> list[Item]:
    """A search result, checked to be a list of items."""
    assert isinstance(result, list) and all(isinstance(i, Item) for i in result)
    return result


def spaces(result: object) -> list[tuple[str, ...]]:
    """A list_namespaces result, checked to be a list of tuples."""
    assert isinstance(result, list) and all(isinstance(ns, tuple) for ns in result)
    return result


def put_all(store: BaseStore, data: list[tuple[tuple[str, ...], str, dict[str, Any]]]) -> None:
    store.batch([PutOp(ns, key, value) for ns, key, value in data])


# --- put, get, update, delete -----------------------------------------------------------------


def test_put_get_update_delete(store: BaseStore) -> None:
    namespace = ("test", "documents")
    value = {"title": "Test Document", "content": "Hello, World!"}
    store.put(namespace, "doc1", value)
    item = store.get(namespace, "doc1")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (namespace, "doc1", value)
    updated = {"title": "Updated Document", "content": "Hello, Updated!"}
    store.put(namespace, "doc1", updated)
    again = store.get(namespace, "doc1")
    assert again is not None and again.value == updated
    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None
    store.delete(namespace, "doc1")  # deleting what is gone is no error
    assert store.search(("test",)) == []


def test_batch_results_come_in_order_with_reads_before_writes(store: BaseStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(("test",), "key3"),
        ]
    )
    assert len(results) == 5
    first = results[0]
    assert isinstance(first, Item) and first.value == {"data": "value1"}
    assert (first.key, first.namespace) == ("key1", ("test", "foo"))
    assert results[1] is None
    assert [i.key for i in items(results[2])] == ["key1"]
    assert isinstance(results[3], list)
    assert ("test", "foo") in results[3] and ("test", "bar") in results[3]
    assert results[4] is None

    results = store.batch(
        [
            SearchOp(("test",), filter=None, limit=5, offset=0),
            GetOp(("test", "bar"), "key2"),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=5, offset=0),
            PutOp(("test",), "key3", {"data": "value3"}),
            GetOp(("test",), "key3"),  # the put lands after the batch's reads
        ]
    )
    assert isinstance(results[0], list) and len(results[0]) == 2
    assert isinstance(results[1], Item) and results[1].value == {"data": "value2"}
    assert results[3] is None and results[4] is None
    third = store.get(("test",), "key3")
    assert third is not None and third.value == {"data": "value3"}


def test_batch_gets(store: BaseStore) -> None:
    put_all(store, [(("test",), "key1", {"data": "value1"}), (("test",), "key2", {"d": 2})])
    results = store.batch([GetOp(("test",), k) for k in ("key1", "key2", "key3")])
    assert [r.key if isinstance(r, Item) else r for r in results] == ["key1", "key2", None]


def test_batch_puts_and_a_delete(store: BaseStore) -> None:
    store.put(("test",), "key3", {"data": "old"})
    results = store.batch(
        [
            PutOp(("test",), "key1", {"data": "value1"}),
            PutOp(("test",), "key2", {"data": "value2"}),
            PutOp(("test",), "key3", None),
        ]
    )
    assert results == [None, None, None]
    assert [getattr(store.get(("test",), k), "value", None) for k in ("key1", "key2", "key3")] == [
        {"data": "value1"},
        {"data": "value2"},
        None,
    ]


def test_the_last_put_of_a_key_in_a_batch_wins(store: BaseStore) -> None:
    store.batch(
        [
            PutOp(("t",), "k", {"v": 1}),
            PutOp(("t",), "k", {"v": 2}),
            PutOp(("t",), "gone", {"v": 1}),
            PutOp(("t",), "gone", None),
        ]
    )
    assert getattr(store.get(("t",), "k"), "value", None) == {"v": 2}
    assert store.get(("t",), "gone") is None


# --- search -------------------------------------------------------------------------------


def test_batch_searches(store: BaseStore) -> None:
    put_all(
        store,
        [
            (("test", "foo"), "key1", {"data": "value1", "tag": "a"}),
            (("test", "bar"), "key2", {"data": "value2", "tag": "a"}),
            (("test", "baz"), "key3", {"data": "value3", "tag": "b"}),
        ],
    )
    tagged, two, inside = store.batch(
        [
            SearchOp(("test",), filter={"tag": "a"}, limit=10, offset=0),
            SearchOp(("test",), filter=None, limit=2, offset=0),
            SearchOp(("test", "foo"), filter=None, limit=10, offset=0),
        ]
    )
    assert isinstance(tagged, list) and isinstance(two, list) and isinstance(inside, list)
    assert sorted(i.key for i in items(tagged)) == ["key1", "key2"]
    assert len(items(two)) == 2
    assert [i.namespace for i in items(inside)] == [("test", "foo")]


def test_search_by_namespace_filter_and_page(store: BaseStore) -> None:
    put_all(
        store,
        [
            (("test", "docs"), "doc1", {"title": "First", "author": "Alice", "tags": ["x"]}),
            (("test", "docs"), "doc2", {"title": "Second", "author": "Bob", "tags": ["draft"]}),
            (("test", "images"), "img1", {"title": "Image", "author": "Alice", "tags": ["y"]}),
        ],
    )
    assert len(store.search(("test",))) == 3
    docs = store.search(("test", "docs"))
    assert sorted(i.key for i in docs) == ["doc1", "doc2"]
    assert all(i.namespace == ("test", "docs") for i in docs)
    alice = store.search(("test",), filter={"author": "Alice"})
    assert sorted(i.key for i in alice) == ["doc1", "img1"]
    assert [i.key for i in store.search(("test",), filter={"tags": ["draft"]})] == ["doc2"]
    assert len(store.search(("test",), limit=2)) == 2
    assert len(store.search(("test",), offset=2)) == 1
    everything = [i.key for i in store.search(("test",), limit=10)]
    assert [i.key for i in store.search(("test",), limit=1, offset=1)] == everything[1:2]


def test_search_filters_with_operators_and_nested_values(store: BaseStore) -> None:
    put_all(
        store,
        [
            (("test",), "doc1", {"color": "red", "score": 4.5, "meta": {"lang": "en"}}),
            (("test",), "doc2", {"color": "red", "score": 3.0, "meta": {"lang": "pt"}}),
            (("test",), "doc3", {"color": "green", "score": 4.0, "meta": {"lang": "en"}}),
            (("test",), "doc4", {"color": "blue", "score": 3.5}),
        ],
    )

    def keys(**filter: Any) -> list[str]:
        return sorted(i.key for i in store.search(("test",), filter=filter))

    assert keys(color="red") == ["doc1", "doc2"]
    assert keys(score={"$gt": 3.2}) == ["doc1", "doc3", "doc4"]
    assert keys(score={"$gte": 4.0}, color="green") == ["doc3"]
    assert keys(score={"$lt": 3.5}) == ["doc2"]
    assert keys(score={"$lte": 3.5}) == ["doc2", "doc4"]
    assert keys(color={"$ne": "red"}) == ["doc3", "doc4"]
    assert keys(color={"$eq": "blue"}) == ["doc4"]
    assert keys(meta={"lang": "en"}) == ["doc1", "doc3"]
    assert keys(color="purple") == []


def test_search_stops_at_namespace_label_boundaries(store: BaseStore) -> None:
    for namespace in [("foo",), ("foo", "child"), ("foo", "child", "deep"), ("foobar",),
                      ("foobar", "baz"), ("foo2",), ("Foo",)]:  # fmt: skip
        store.put(namespace, "k", {"v": 1})

    def found(prefix: tuple[str, ...]) -> set[tuple[str, ...]]:
        return {item.namespace for item in store.search(prefix, limit=100)}

    assert found(("foo",)) == {("foo",), ("foo", "child"), ("foo", "child", "deep")}
    assert found(("foobar",)) == {("foobar",), ("foobar", "baz")}
    assert found(("fo",)) == set()
    assert found(("Foo",)) == {("Foo",)}
    assert len(found(())) == 7  # an empty prefix constrains nothing


def test_query_without_an_index_still_finds_the_item(store: BaseStore) -> None:
    # InMemoryStore without an index ignores `query`; FlowState's store reads it as a
    # full-text search. Either way the item that says it is found.
    doc = {"foo": "bar"}
    store.put(("foo", "langgraph", "foo"), "bar", doc)
    assert store.search(("foo", "langgraph", "foo"), query="bar")[0].value == doc


# --- list_namespaces ------------------------------------------------------------------------

NAMESPACES = [
    ("a", "b", "c"),
    ("a", "b", "d", "e"),
    ("a", "b", "d", "i"),
    ("a", "b", "f"),
    ("a", "c", "f"),
    ("b", "a", "f"),
    ("users", "123"),
    ("users", "456", "settings"),
    ("admin", "users", "789"),
]


def test_list_namespaces_by_prefix_suffix_depth_and_page(store: BaseStore) -> None:
    put_all(store, [(ns, f"id_{i}", {"data": f"value_{i:02d}"}) for i, ns in enumerate(NAMESPACES)])
    assert sorted(store.list_namespaces(prefix=("a", "b"))) == NAMESPACES[:4]
    assert sorted(store.list_namespaces(suffix=("f",))) == [NAMESPACES[3], *NAMESPACES[4:6]]
    assert sorted(store.list_namespaces(prefix=("a",), suffix=("f",))) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
    ]
    assert sorted(store.list_namespaces(prefix=("a", "b"), max_depth=3)) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == NAMESPACES[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == NAMESPACES[2:4]
    assert sorted(store.list_namespaces(prefix=("a", "*", "f"))) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
    ]
    assert sorted(store.list_namespaces(suffix=("*", "f"))) == [NAMESPACES[3], *NAMESPACES[4:6]]
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    assert sorted(store.list_namespaces()) == sorted(NAMESPACES)
    assert sorted(store.list_namespaces(max_depth=2)) == [
        ("a", "b"),
        ("a", "c"),
        ("admin", "users"),
        ("b", "a"),
        ("users", "123"),
        ("users", "456"),
    ]


def test_list_namespaces_pages_in_order(store: BaseStore) -> None:
    put_all(store, [(("namespace", f"sub_{i:02d}"), "k", {"i": i}) for i in range(20)])
    for offset in (0, 5, 15):
        assert store.list_namespaces(prefix=("namespace",), limit=5, offset=offset) == [
            ("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)
        ]


def test_list_namespaces_match_whole_labels(store: BaseStore) -> None:
    for namespace in [("uid", "users", "alice"), ("uid", "users", "malice"), ("users", "alice"),
                      ("users", "alice\n")]:  # fmt: skip
        store.put(namespace, "k", {"v": 1})
    assert set(store.list_namespaces(suffix=("alice",), limit=100)) == {
        ("uid", "users", "alice"),
        ("users", "alice"),
    }
    assert set(store.list_namespaces(prefix=("uid", "*", "alice"))) == {("uid", "users", "alice")}
    assert store.list_namespaces(prefix=("users", "alice")) == [("users", "alice")]


def test_an_empty_store_lists_nothing(store: BaseStore) -> None:
    assert store.list_namespaces() == []
    assert store.search(()) == []


def test_a_deleted_items_namespace_is_no_longer_listed(fs: FlowState) -> None:
    # As LangGraph's SQLite and Postgres stores; its InMemoryStore keeps listing the namespace.
    store = FlowStateStore(fs)
    store.put(("a", "b"), "k", {"v": 1})
    store.put(("c",), "k", {"v": 1})
    store.delete(("a", "b"), "k")
    assert store.list_namespaces() == [("c",)]


def test_batch_list_namespaces(store: BaseStore) -> None:
    put_all(
        store,
        [
            (("test", "documents", "public"), "doc1", {"content": "public doc"}),
            (("test", "documents", "private"), "doc2", {"content": "private doc"}),
            (("test", "images", "public"), "img1", {"content": "public image"}),
            (("prod", "documents", "public"), "doc3", {"content": "prod doc"}),
        ],
    )
    listed, shallow, public = store.batch(
        [
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=2, limit=10, offset=0),
            ListNamespacesOp(
                match_conditions=(MatchCondition("suffix", ("public",)),),
                max_depth=None,
                limit=10,
                offset=0,
            ),
        ]
    )
    assert len(spaces(listed)) == 4
    assert all(len(ns) <= 2 for ns in spaces(shallow))
    assert len(spaces(public)) == 3 and all(ns[-1] == "public" for ns in spaces(public))


# --- namespaces LangGraph refuses, and async ----------------------------------------------------


def test_invalid_namespaces_are_refused_by_put(store: BaseStore) -> None:
    doc = {"foo": "bar"}
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "foo", doc)
        with pytest.raises(InvalidNamespaceError):
            asyncio.run(store.aput(bad, "foo", doc))
    store.batch([PutOp(("langgraph", "foo"), "bar", doc)])  # past the public put: allowed
    assert getattr(store.get(("langgraph", "foo"), "bar"), "value", None) == doc
    assert store.list_namespaces() == [("langgraph", "foo")]


def test_async_methods_and_abatch(store: BaseStore) -> None:
    async def run() -> None:
        doc = {"foo": "bar"}
        await store.aput(("foo", "langgraph", "foo"), "bar", doc)
        item = await store.aget(("foo", "langgraph", "foo"), "bar")
        assert item is not None and item.value == doc
        assert (await store.asearch(("foo", "langgraph", "foo")))[0].value == doc
        assert await store.alist_namespaces() == [("foo", "langgraph", "foo")]
        results = await store.abatch(
            [
                PutOp(("valid", "namespace"), "key", doc),
                GetOp(("foo", "langgraph", "foo"), "bar"),
                SearchOp(("foo",), filter={"foo": "bar"}, limit=10, offset=0),
            ]
        )
        assert results[0] is None and isinstance(results[1], Item)
        assert [i.key for i in items(results[2])] == ["bar"]
        assert (await store.aget(("valid", "namespace"), "key")) is not None
        await store.adelete(("foo", "langgraph", "foo"), "bar")
        assert (await store.aget(("foo", "langgraph", "foo"), "bar")) is None

    asyncio.run(run())


# --- what FlowState's store adds --------------------------------------------------------------


def test_a_put_supersedes_the_keys_state_and_a_delete_forgets_it(fs: FlowState) -> None:
    store = FlowStateStore(fs)
    key = state_key(("users", "123"), "prefs")
    assert key.startswith(namespace_prefix(("users", "123"))) and len(key) == 26
    store.put(("users", "123"), "prefs", {"theme": "dark"})
    store.put(("users", "123"), "prefs", {"theme": "light"})
    [old, new] = fs.reveal([f"r1.{key}", f"r2.{key}"])
    assert old.superseded_by == [new.state.id] and new.superseded_by == []
    assert [s.id for s in fs.current_states(key)] == [new.state.id]
    assert new.state.summary == 'users/123/prefs: {"theme":"light"}'
    assert f"{new.state.id} [environment] users/123/prefs" in fs.index().text
    store.delete(("users", "123"), "prefs")
    assert fs.current_states(key) == [] and store.get(("users", "123"), "prefs") is None
    assert "(SUPERSEDED by r2." in fs.index().text  # the old value stays stale, not current
    store.put(("users", "123"), "prefs", {"theme": "blue"})
    assert getattr(store.get(("users", "123"), "prefs"), "value", None) == {"theme": "blue"}


def test_a_neighbouring_flowstate_namespace_is_never_reached(
    fs: FlowState, neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    from tests.integrations.conftest import _forget

    mine = FlowStateStore(fs)
    mine.put(("users", "1"), "prefs", {"theme": "dark"})
    other_name = f"{namespace}_other"
    try:
        with FlowState.connect(settings=neo4j_settings, namespace=other_name) as other:
            theirs = FlowStateStore(other)
            assert theirs.get(("users", "1"), "prefs") is None
            assert theirs.search(()) == [] and theirs.list_namespaces() == []
            assert theirs.search(("users",), query="dark theme") == []
            theirs.put(("users", "1"), "prefs", {"theme": "light"})
            theirs.delete(("users", "1"), "prefs")
    finally:
        _forget(neo4j_settings, other_name)
    assert getattr(mine.get(("users", "1"), "prefs"), "value", None) == {"theme": "dark"}


def test_query_is_full_text_search_best_first(fs: FlowState) -> None:
    store = FlowStateStore(fs)
    store.put(("docs",), "d1", {"text": "Python tutorial for beginners"})
    store.put(("docs",), "d2", {"text": "TypeScript guide"})
    store.put(("docs",), "d3", {"text": "Python and more Python, a Python guide"})
    found = store.search(("docs",), query="python")
    assert [i.key for i in found] == ["d3", "d1"]
    assert all(i.score is not None for i in found)
    assert store.search(("docs",), query="python", filter={"text": "TypeScript guide"}) == []


def test_a_bad_value_is_refused_and_nothing_of_the_batch_is_written(fs: FlowState) -> None:
    store = FlowStateStore(fs)
    unjson: dict[str, Any] = {"when": object()}
    for bad in [unjson, {"text": "x" * 25_000}]:
        with pytest.raises(UsageError, match="'big'"):
            store.batch([PutOp(("t",), "fine", {"v": 1}), PutOp(("t",), "big", bad)])
    assert fs.history() == [] and store.search(()) == []
    with pytest.raises(UsageError, match="category"):
        FlowStateStore(fs, category="opinion")


def test_a_put_racing_another_writer_supersedes_the_newer_value(
    fs: FlowState, neo4j_settings: Neo4jSettings
) -> None:
    """Another writer puts the key between this batch's read and its commit: the commit is
    refused (a state is superseded once), and the batch reads again and supersedes the newer
    state, so the last put wins and every older value stays superseded."""
    with FlowState.connect(settings=neo4j_settings, namespace=fs.namespace) as elsewhere:
        rival = FlowStateStore(elsewhere)

        class Raced(FlowStateStore):
            raced = False

            def _read_states(self, prefixes: Sequence[str]) -> Any:
                found = super()._read_states(prefixes)
                if not self.raced:  # once, after this batch read the key
                    self.raced = True
                    rival.put(("t",), "k", {"v": "rival"})
                return found

        store = FlowStateStore(fs)
        store.put(("t",), "k", {"v": "first"})
        Raced(fs).put(("t",), "k", {"v": "mine"})
    assert getattr(store.get(("t",), "k"), "value", None) == {"v": "mine"}
    key = state_key(("t",), "k")
    # r3 was the refused first try, discarded; r4 the one that landed.
    assert [r.id for r in fs.history()] == ["r1", "r2", "r4"] and fs.pending() == []
    assert [s.id for s in fs.current_states(key)] == [f"r4.{key}"]
    assert [r.superseded_by for r in fs.reveal([f"r1.{key}", f"r2.{key}"])] == [
        [f"r2.{key}"],
        [f"r4.{key}"],
    ]


def test_a_store_over_an_async_flowstate_runs_on_its_loop(
    fs: FlowState, neo4j_settings: Neo4jSettings
) -> None:
    async def run() -> None:
        async with await AsyncFlowState.connect(
            settings=neo4j_settings, namespace=fs.namespace
        ) as afs:
            store = FlowStateStore(afs)
            await store.aput(("users", "1"), "prefs", {"theme": "dark"})
            await store.aput(("users", "1"), "prefs", {"theme": "light"})
            await store.aput(("users", "2"), "prefs", {"theme": "dark"})
            item = await store.aget(("users", "1"), "prefs")
            assert item is not None and item.value == {"theme": "light"}
            dark = await store.asearch(("users",), filter={"theme": "dark"})
            assert [i.namespace for i in dark] == [("users", "2")]
            found = await store.asearch(("users",), query="light")
            assert [i.namespace for i in found] == [("users", "1")]
            assert await store.alist_namespaces() == [("users", "1"), ("users", "2")]
            await store.adelete(("users", "2"), "prefs")
            got, listed = await store.abatch(
                [
                    GetOp(("users", "2"), "prefs"),
                    ListNamespacesOp(match_conditions=None, max_depth=None, limit=9, offset=0),
                ]
            )
            assert got is None and listed == [("users", "1")]
            key = state_key(("users", "1"), "prefs")
            [old] = await afs.reveal([f"r1.{key}"])
            assert old.superseded_by == [f"r2.{key}"]
            with pytest.raises(UsageError, match="await"):
                store.get(("users", "1"), "prefs")

    asyncio.run(run())
