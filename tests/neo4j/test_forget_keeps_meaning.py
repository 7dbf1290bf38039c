"""Forgetting or expiring does not change the meaning of what stays: a fact superseded by a
removed state stays superseded (index, search, reveal, why, drafts, the guard), only the
removed state's id is kept (never its content), and the result says what was left: states
still superseded by a removed one, and states that lost a relation to one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from flowstate import FlowState, RetentionPolicy
from flowstate.store import Repository, Store
from tests.neo4j.conftest import Raw
from tests.neo4j.mcp_host import hosted, ok

pytestmark = pytest.mark.neo4j

SECRET = "Ben Okafor joins, passport X9081726"


def add(key: str, summary: str, category: str = "constraint", **relations: str) -> dict[str, Any]:
    return {
        "op": "add",
        "key": key,
        "category": category,
        "summary": summary,
        "content": summary,
        "relations": [{"type": t, "target": target} for t, target in relations.items()],
    }


def trip(fs: FlowState, superseder_category: str = "constraint") -> None:
    """r1.travellers, superseded by r3.travellers; r4.hotel_booking depends on the latter."""
    fs.remember([add("travellers", "4 travellers")], "We are four")
    fs.remember([add("budget", "150 EUR a night")], "Budget")
    fs.remember(
        [add("travellers", SECRET, superseder_category, SUPERSEDES="r1.travellers")], "Ben joins"
    )
    fs.remember(
        [add("hotel_booking", "Casa Azul for 5", "decision", DEPENDS_ON="r3.travellers")], "Book"
    )


def test_forgetting_a_superseder_keeps_the_old_fact_superseded(
    store: Store, repo: Repository
) -> None:
    fs = FlowState(store, repo.namespace)
    trip(fs)
    removal = fs.forget("r3")
    assert removal.superseded == {"r1.travellers": "r3.travellers"}
    assert removal.dependents == {"r4.hotel_booking": ["DEPENDS_ON r3.travellers"]}
    assert removal.left_behind() == (
        "r1.travellers stays superseded by r3.travellers (forgotten); "
        "r4.hotel_booking lost DEPENDS_ON r3.travellers"
    )

    line = "r1.travellers [constraint] 4 travellers  (SUPERSEDED by r3.travellers, forgotten)"
    assert line in fs.index().text
    [hit] = [h for h in fs.search("travellers") if h.id == "r1.travellers"]
    assert (hit.superseded_by, hit.superseder_removed) == ("r3.travellers", "forgotten")
    [revealed] = fs.reveal(["r1.travellers"])
    assert revealed.superseded_by == ["r3.travellers"]
    assert revealed.superseded_mark == "  (SUPERSEDED by r3.travellers, forgotten)"
    assert "(SUPERSEDED by r3.travellers, forgotten)" in fs.why("r1.travellers").tree()
    assert fs.why("r1.travellers").removed == {"r3.travellers": "forgotten"}
    # What the dependent rested on is reported, not kept: its relation is gone with r3.
    assert fs.reveal(["r4.hotel_booking"])[0].relations == []


def test_forgetting_keeps_only_the_removed_states_id(
    store: Store, repo: Repository, raw: Raw
) -> None:
    fs = FlowState(store, repo.namespace)
    trip(fs)
    fs.forget("r3.travellers")  # one state, not its request
    everything = raw.rows(
        "MATCH (n) WHERE n.namespace = $ns RETURN properties(n) AS props", ns=repo.namespace
    )
    assert "Okafor" not in json.dumps(everything, default=str)  # the content is gone
    [kept] = raw.rows(
        "MATCH (s:State {namespace: $ns, id: 'r1.travellers'}) RETURN properties(s) AS props",
        ns=repo.namespace,
    )
    assert kept["props"]["superseded_by_removed"] == "r3.travellers"
    assert kept["props"]["superseder_removed"] == "forgotten"
    assert "(SUPERSEDED by r3.travellers, forgotten)" in fs.index().text


def test_expiring_a_superseder_keeps_the_old_fact_superseded(
    store: Store, repo: Repository
) -> None:
    fs = FlowState(store, repo.namespace)
    trip(fs, superseder_category="environment")
    expired = fs.apply_retention(RetentionPolicy(days={"environment": 0}))
    assert expired["environment"]["nodes"] == 1
    assert expired["environment"]["superseded"] == {"r1.travellers": "r3.travellers"}
    assert expired["environment"]["dependents"] == {
        "r4.hotel_booking": ["DEPENDS_ON r3.travellers"]
    }
    assert "(SUPERSEDED by r3.travellers, expired)" in fs.index().text
    assert fs.reveal(["r1.travellers"])[0].relations[0].removed == "expired"


def test_a_stale_fact_stays_refused_by_the_guard_and_may_be_superseded_again(
    store: Store, repo: Repository
) -> None:
    fs = FlowState(store, repo.namespace)
    trip(fs)
    fs.forget("r3")
    with fs.begin("Book the minibus for the group") as session:
        session.reveal(["r1.travellers"])
        refused = session.guard("book_minibus", {"seats": 4}, cites=["r1.travellers"])
        assert not refused.approved and "r1.travellers (SUPERSEDED by r3.travellers" in (
            refused.reason
        )
        session.discard()
    # There is no newer state to supersede instead: the current value supersedes it again.
    again = fs.remember([add("travellers", "4 travellers", SUPERSEDES="r1.travellers")], "Ben left")
    assert (
        "r1.travellers [constraint] 4 travellers  (SUPERSEDED by r6.travellers)"
        in (fs.index().text)
        and again.request_id == "r6"
    )


def test_an_interrupted_request_that_opened_the_fact_still_sees_it_stale(
    store: Store, repo: Repository
) -> None:
    """The forget scrubs drafts: the copy of r1.travellers a request opened keeps its removed
    superseder, so the request resumed later refuses to act on it."""
    fs = FlowState(store, repo.namespace)
    trip(fs)
    with fs.begin("Book the minibus for the group") as session:
        rid = session.request_id
        session.reveal(["r1.travellers"])
    fs.forget("r3")
    resumed = FlowState(store, repo.namespace).resume(rid)
    refused = resumed.guard("book_minibus", {"seats": 4}, cites=["r1.travellers"])
    assert not refused.approved and "stale" in refused.reason
    resumed.discard()


def test_cli_forget_and_retention_say_what_they_left(cli, store: Store, repo: Repository) -> None:  # noqa: ANN001
    fs = FlowState(store, repo.namespace)
    trip(fs)
    done = cli("forget", "r3", "-N", repo.namespace, "--yes")
    assert done.exit_code == 0, done.output
    assert "r1.travellers stays superseded by r3.travellers (forgotten)" in done.stdout
    assert "r4.hotel_booking lost DEPENDS_ON r3.travellers" in done.stdout
    shown = cli("show", "r1.travellers", "-N", repo.namespace)
    assert "(SUPERSEDED by r3.travellers, forgotten)" in shown.stdout
    assert "SUPERSEDES <- r3.travellers (forgotten)" in shown.stdout

    fs.remember([add("weather", "Sunny all week", "environment")], "Weather")
    fs.remember([add("outdoor", "Lunch outside", "decision", SUPERSEDES="r5.weather")], "Lunch")
    # r6.outdoor SUPERSEDES r5.weather: expiring decisions leaves r5.weather stale
    expired = cli(
        "retention", "apply", "-N", repo.namespace, "--policy", '{"decision": 0}', "--yes", "--json"
    )
    assert expired.exit_code == 0, expired.output
    data = json.loads(expired.stdout)["decision"]
    assert data["superseded"] == {"r5.weather": "r6.outdoor"} and data["nodes"] == 2


def test_mcp_forget_says_what_it_left(store: Store, repo: Repository) -> None:
    trip(FlowState(store, repo.namespace))

    async def script(client: Any) -> None:
        done = await ok(client, "memory_forget", id="r3")
        assert done["superseded"] == {"r1.travellers": "r3.travellers"}
        assert done["dependents"] == {"r4.hotel_booking": ["DEPENDS_ON r3.travellers"]}
        index = await ok(client, "memory_index")
        assert "(SUPERSEDED by r3.travellers, forgotten)" in index["text"]
        found = await ok(client, "memory_search", query="travellers")
        hit = found["hits"]["r1.travellers"]
        assert hit.endswith("(SUPERSEDED by r3.travellers, forgotten)")

    hosted(store, repo.namespace, script, allow_forget=True)
