"""Relevance and search see the whole namespace, and only it.

A request's index lists an old request that matches it in full, however far past the loaded
requests it lies (found through the full-text index, or among the last commits that index may
not hold yet), and the range line still accounts for every request. A namespace whose name
extends a tenant's cannot crowd the tenant's search hits out, whatever it holds. A store
written before the namespace's search term existed is upgraded at connect.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import pytest

from flowstate import AsyncFlowState, FlowState, ValidationFailed
from flowstate.settings import Neo4jSettings
from flowstate.store import Store
from flowstate.store.search import namespace_term
from tests.neo4j.conftest import Raw
from tests.neo4j.engine_helpers import Harness, Shell, add, final, step, user_prompt

pytestmark = pytest.mark.neo4j

ASK = "remind me of the deploy window for billing-api"
DEPLOY = add(
    "deploy_window",
    summary="Deploy window for billing-api is Tuesday",
    content="Deploy window for billing-api is Tuesday 10:00-12:00 UTC",
)
_RANGE = re.compile(r"^r(\d+)-r(\d+): (\d+) older requests, folded", re.M)
_LISTED = re.compile(r"^r(\d+):(?: |$)", re.M)  # a one-state request: "r3:" alone


def _lunch(fs: FlowState, n: int) -> None:
    fs.remember(
        [add(f"lunch_{n}", summary=f"Team lunch {n} booked at cafe {n}", content=f"cafe {n}")],
        f"Book team lunch {n}",
    )


def _accounts_for_every_request(text: str, total: int) -> set[int]:
    """The seqs listed on their own lines; and that the range line names every other one."""
    listed = {int(seq) for seq in _LISTED.findall(text)}
    found = _RANGE.search(text)
    assert found is not None, text[:300]
    first, last, count = (int(g) for g in found.groups())
    inside = set(range(first, last + 1)) - listed
    assert count == len(inside), f"the range line counts {count}, {len(inside)} are folded"
    assert listed | inside == set(range(1, total + 1))
    return listed


@pytest.fixture
def fs(store: Store, namespace: str) -> Iterator[FlowState]:
    fs = FlowState(store, namespace)
    yield fs
    fs.repository.forget_namespace(force=True)


@pytest.fixture
def neighbour(store: Store, namespace: str) -> Iterator[FlowState]:
    """The namespace whose name extends the test's own: `<namespace>-archive`."""
    fs = FlowState(store, f"{namespace}-archive")
    yield fs
    fs.repository.forget_namespace(force=True)


@pytest.fixture
def deep(fs: FlowState, neighbour: FlowState) -> FlowState:
    """120 requests: r1 holds the deploy window, r2-r120 team lunches. The neighbour holds 70
    states that match the request better than r1 does."""
    fs.remember([DEPLOY], "Deploy window for billing-api is Tuesday")
    for n in range(2, 121):
        _lunch(fs, n)
    for n in range(70):
        words = "deploy window billing api deploy window billing api"
        neighbour.remember([add(f"deploy_{n}", summary=words, content=words)], "deploys")
    return fs


def test_a_request_sees_its_match_from_the_oldest_request_in_full(
    deep: FlowState, store: Store, namespace: str
) -> None:
    session = deep.begin(ASK)
    text = session.index()
    assert "  r1.deploy_window [environment] Deploy window for billing-api is Tuesday" in text
    assert 1 in _accounts_for_every_request(text, 120)
    assert "(listed below: r1)" in text
    assert "r120: " in text  # the newest requests are still there

    # Picked up from its draft by another front door (as after a restart): the same index.
    rid, handle = session.request_id, session.handle
    assert handle is not None
    deep.close()  # its hold goes; the draft stays
    picked = FlowState(store, namespace).session(rid, handle)
    try:
        assert picked.index() == text
    finally:
        picked.discard()


def test_the_shown_index_and_an_agents_prompt_rank_the_whole_namespace(
    deep: FlowState, store: Store, namespace: str, async_shell: Shell
) -> None:
    shown = deep.shown_index(ASK).text
    assert "r1.deploy_window [environment]" in shown
    _accounts_for_every_request(shown, 120)
    assert async_shell.store is not None
    afs = AsyncFlowState(async_shell.store, namespace)
    assert async_shell.wait(afs.shown_index(ASK)).text == shown
    assert "r1.deploy_window" not in deep.shown_index().text  # no request: recency alone

    h = Harness(store, namespace)
    agent, model = h.agent([step(action=final("Tuesday"))])
    assert agent.run(ASK).answer == "Tuesday"
    prompt = user_prompt(model, 0)
    assert "r1.deploy_window [environment] Deploy window for billing-api is Tuesday" in prompt


def test_matches_past_the_cap_still_fold_with_an_exact_count(
    fs: FlowState, neighbour: FlowState
) -> None:
    # 30 old requests match; the index loads a fixed number of them, and none goes missing.
    for n in range(1, 31):
        fs.remember([add(f"deploy_{n}", summary=f"Deploy window {n} for billing-api")], "deploy")
    for n in range(31, 131):
        _lunch(fs, n)
    text = fs.shown_index(ASK).text
    listed = _accounts_for_every_request(text, 130)
    matched = {seq for seq in listed if seq <= 30}
    assert 1 <= len(matched) <= 8
    assert all(f"r{seq}.deploy_{seq} [environment]" in text for seq in matched)


def test_an_old_request_committed_last_is_ranked_without_the_full_text_index(
    fs: FlowState, store: Store, namespace: str
) -> None:
    # r1 is begun first and committed after r2-r120: it is among the last commits. Its state
    # says what it is about only in its key, which the full-text index does not hold, as it
    # would not hold a state committed a moment ago: only the read of the last commits finds it.
    session = fs.begin("note the deploy window")
    for n in range(2, 121):
        _lunch(fs, n)
    session.record([add("deploy_window_billing_api", summary="Tuesdays", content="Tuesdays")])
    session.commit("noted")
    assert fs.search("deploy window billing") == []  # not by the full-text index
    fresh = FlowState(store, namespace)  # a new process: its index is loaded afresh
    text = fresh.shown_index(ASK).text
    assert "  r1.deploy_window_billing_api [environment] Tuesdays" in text
    _accounts_for_every_request(text, 120)


def test_a_neighbour_whose_name_extends_the_tenants_cannot_crowd_its_search(
    fs: FlowState, neighbour: FlowState
) -> None:
    review = add("review", summary="Quarterly review with finance", content="the budget once")
    fs.remember([review], "quarterly review")
    for n in range(60):
        neighbour.remember(
            [add(f"budget_{n}", summary=f"budget budget {n}", content="budget budget budget")],
            "budget",
        )
    assert [h.id for h in fs.search("budget")] == ["r1.review"]
    assert [h.id for h in fs.search("budget", limit=1)] == ["r1.review"]
    theirs = neighbour.search("budget", limit=50)
    assert len(theirs) == 50 and all(h.summary.startswith("budget budget") for h in theirs)


@pytest.mark.parametrize(
    "text",
    [
        'budget" OR namespace_term:* OR "x',
        "budget) OR (namespace:*",
        "+budget -review AND NOT finance || && ! ~2 ^3 [a TO z] {a TO z} /re.*/ \\ ?",
        "namespace_term:ns* budget*",
    ],
)
def test_lucene_syntax_in_a_search_is_only_words(
    fs: FlowState, neighbour: FlowState, text: str
) -> None:
    fs.remember([add("review", summary="Quarterly review", content="the budget")], "review")
    neighbour.remember([add("budget", summary="budget", content="budget")], "budget")
    hits = fs.search(text)
    assert [h.id for h in hits] == ["r1.review"]
    # The neighbour's own term, typed as a word, is only a word: it matches no state's text.
    assert fs.search(namespace_term(neighbour.namespace)) == []


@pytest.mark.parametrize(
    "name",
    ['u42" OR 1=1', "u42 archive", "u42)", "u42\\", "*", "u42:archive", "-u42", "", "x" * 129],
)
def test_a_hostile_namespace_name_is_refused_before_any_query(
    store: Store, raw: Raw, name: str
) -> None:
    with pytest.raises(ValidationFailed, match="invalid namespace"):
        FlowState(store, name)
    assert raw.count(name) == (0, 0)


@pytest.fixture
def legacy(raw: Raw) -> Iterator[None]:
    """The store as FlowState before `namespace_term`: its full-text index over the
    namespace's text. Dropped again afterwards, whatever the test left."""
    raw.rows(
        "CREATE FULLTEXT INDEX flowstate_state_text IF NOT EXISTS "
        "FOR (n:State) ON EACH [n.namespace, n.summary, n.content] "
        "OPTIONS {indexConfig: {`fulltext.eventually_consistent`: true}}"
    )
    raw.rows("CALL db.awaitIndexes(300)")
    yield
    raw.rows("DROP INDEX flowstate_state_text IF EXISTS")


def test_an_older_store_is_upgraded_at_connect(
    fs: FlowState,
    neighbour: FlowState,
    raw: Raw,
    legacy: None,
    neo4j_settings: Neo4jSettings,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fs.remember([add("budget", summary="Hotel budget 150", content="150 EUR")], "budget")
    neighbour.remember([add("budget", summary="Hotel budget 90", content="90 EUR")], "budget")
    for ns in (fs.namespace, neighbour.namespace):  # as an older FlowState wrote them
        raw.rows("MATCH (s:State {namespace: $ns}) REMOVE s.namespace_term", ns=ns)
    assert fs.search("budget") == []  # unreachable until the upgrade

    with caplog.at_level(logging.WARNING, logger="flowstate"):
        upgraded = FlowState.connect(settings=neo4j_settings, namespace=fs.namespace)
    assert "get their search term" in caplog.text
    with upgraded:
        assert [h.id for h in upgraded.search("budget")] == ["r1.budget"]
        assert [h.summary for h in upgraded.search("budget")] == ["Hotel budget 150"]
    caplog.clear()
    FlowState.connect(settings=neo4j_settings, namespace=fs.namespace).close()
    assert "search term" not in caplog.text  # once: the older index, its marker, is gone
    assert [h.summary for h in neighbour.search("budget")] == ["Hotel budget 90"]
    for ns in (fs.namespace, neighbour.namespace):
        [row] = raw.rows(
            "MATCH (s:State {namespace: $ns}) RETURN collect(DISTINCT s.namespace_term) AS t",
            ns=ns,
        )
        assert row["t"] == [namespace_term(ns)]
    assert raw.rows("SHOW FULLTEXT INDEXES YIELD name WHERE name = 'flowstate_state_text'") == []
    # The term is store bookkeeping: records read back and exported do not carry it.
    [opened] = fs.reveal(["r1.budget"])
    assert "namespace_term" not in opened.state.model_dump()
    assert "namespace_term" not in "".join(fs.export_jsonl())


def test_the_search_index_is_the_scoped_one(raw: Raw) -> None:
    [row] = raw.rows(
        "SHOW FULLTEXT INDEXES YIELD name, properties, options "
        "WHERE name = 'flowstate_state_search' RETURN properties, options"
    )
    assert row["properties"] == ["namespace_term", "summary", "content"]
    assert row["options"]["indexConfig"]["fulltext.analyzer"] == "standard-no-stop-words"


def test_the_longest_namespaces_are_told_apart_by_the_index(
    store: Store, namespace: str, raw: Raw
) -> None:
    # 128 characters, and the same name one character shorter: each term is one token of the
    # index (207 characters, under the analyzer's limit), so each search finds its own state.
    longest = (namespace + "-" + "a.b_" * 40)[:128]
    names = [longest, longest[:-1]]
    made = [FlowState(store, name) for name in names]
    try:
        for fs, name in zip(made, names, strict=True):
            fs.remember([add("note", summary=f"Parking note of {len(name)}")], "parking")
        assert [h.summary for h in made[0].search("parking")] == ["Parking note of 128"]
        assert [h.summary for h in made[1].search("parking")] == ["Parking note of 127"]
        for name in names:
            rows = raw.rows(
                "CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh() "
                "CALL db.index.fulltext.queryNodes('flowstate_state_search', $q) "
                "YIELD node RETURN node.namespace AS ns",
                q=f"namespace_term:{namespace_term(name)}",
            )
            assert rows == [{"ns": name}]
    finally:
        for fs in made:
            fs.repository.forget_namespace(force=True)
