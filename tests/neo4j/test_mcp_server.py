"""The MCP server through the SDK's in-process client, against a real Neo4j: a host's calls
leave what the agent loop leaves; results are structured; refusals are tool errors with
short reasons; the namespace is the server's; forget and search keep progressive access."""

from __future__ import annotations

import time
from typing import Any

import pytest

from flowstate import FlowState
from flowstate.engine.session import Session
from flowstate.errors import RequestHeld, UsageError
from flowstate.mcp.catalog import READS, WRITES
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import add
from tests.neo4j.mcp_host import (
    assert_same_as_the_agent_loop,
    book_a_hotel,
    call,
    first_requests,
    hosted,
    ok,
    tools_of,
)

pytestmark = pytest.mark.neo4j
READ_NAMES = sorted(t.name for t in READS)
ALL_NAMES = sorted(t.name for t in [*READS, *WRITES])


def test_a_host_request_over_mcp_commits_what_the_agent_loop_would(
    store: Store, repo: Repository, other_repo: Repository
) -> None:
    first_requests(store, repo.namespace, other_repo.namespace)
    assert hosted(store, repo.namespace, book_a_hotel) == "r2"
    assert_same_as_the_agent_loop(store, repo, other_repo)


def test_every_tool_has_an_output_schema_annotations_and_typed_parameters(
    store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)

    async def script(client: Any) -> None:
        tools = await tools_of(client)
        assert sorted(tools) == sorted(n for n in ALL_NAMES if n != "memory_forget")
        for tool in tools.values():
            assert tool["description"] and tool["title"]
            assert "namespace" not in tool["inputSchema"]["properties"]
            assert tool["outputSchema"]["type"] == "object" and tool["outputSchema"]["properties"]
            hints = tool["annotations"]
            assert set(hints) >= {"readOnlyHint", "destructiveHint", "idempotentHint"}
        assert tools["memory_index"]["annotations"]["readOnlyHint"] is True
        assert tools["memory_discard"]["annotations"]["destructiveHint"] is True
        assert tools["memory_commit"]["annotations"]["idempotentHint"] is True
        assert tools["memory_begin"]["annotations"]["readOnlyHint"] is False
        begun = set(tools["memory_begin"]["outputSchema"]["required"])
        assert begun >= {"request_id", "handle", "index"}
        record = tools["memory_record"]["inputSchema"]
        assert record["required"] == ["request_id", "handle", "delta"] and "update" in str(record)
        read = await client.read_resource("flowstate://index")
        assert "r1.budget" in read.contents[0].text
        assert "r1.budget" in (await client.read_resource("flowstate://index/1")).contents[0].text

    hosted(store, repo.namespace, script)


def test_a_read_only_server_lists_only_what_works_there(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    before = repo.counts()

    async def script(client: Any) -> None:
        tools = await tools_of(client)
        assert sorted(tools) == READ_NAMES
        assert all(t["annotations"]["readOnlyHint"] for t in tools.values())
        assert "r1.budget" in (await ok(client, "memory_index"))["text"]
        assert list((await ok(client, "memory_history"))["requests"]) == ["r1"]
        assert (
            "r1.budget [constraint]"
            in (await ok(client, "memory_why", state_id="r1.budget"))["text"]
        )
        assert (await ok(client, "memory_reveal", ids=["r1.budget"]))["states"][0]["id"] == (
            "r1.budget"
        )
        assert list((await ok(client, "memory_search", query="hotel budget"))["hits"])
        failed = await call(client, "memory_search", query="hotel", request_id="r2")
        assert failed.error and "read-only" in failed.text and "without request_id" in failed.text
        for tool in ("memory_begin", "memory_remember", "memory_forget", "memory_commit"):
            failed = await call(client, tool, request_id="r2")
            assert failed.error and "unknown tool" in failed.text, tool

    hosted(store, repo.namespace, script, read_only=True, allow_forget=True)
    assert repo.counts() == before and repo.open_requests() == []


def test_rule_violations_are_tool_errors_with_the_reasons(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)

    async def script(client: Any) -> None:
        await ok(client, "memory_begin", text="Change the budget")
        failed = await call(
            client,
            "memory_record",
            request_id="r2",
            delta=[{"op": "update", "key": "budget", "summary": "200 EUR"}],
        )
        assert failed.error and "nothing applied" in failed.text and "budget" in failed.text
        failed = await call(client, "memory_reveal", request_id="r2", ids=["r9.secret"])
        assert failed.error and "r9.secret" in failed.text
        failed = await call(
            client, "memory_guard", request_id="r2", tool="pay", arguments={}, cites=[]
        )
        assert failed.error and "do not run pay" in failed.text and "cite the states" in failed.text
        failed = await call(
            client, "memory_record", request_id="r7", handle="fsh_guess", delta=[add("x")]
        )
        assert failed.error and "r7" in failed.text and "it is not open" in failed.text
        second = await ok(client, "memory_begin", text="a second one")  # requests side by side
        assert second["request_id"] == "r3"
        await ok(client, "memory_discard", request_id="r3")
        await ok(client, "memory_reveal", request_id="r2", ids=["r1.budget"])
        approved = await ok(
            client,
            "memory_guard",
            request_id="r2",
            tool="pay",
            arguments={"eur": 150},
            cites=["r1.budget"],
        )
        assert approved == {"decision_id": "r2.a2"}
        await ok(client, "memory_commit", request_id="r2", answer="kept")

    hosted(store, repo.namespace, script)
    [*_, bundle] = repo.bundles()
    assert [d.approved for d in bundle.decisions] == [False, True]


def test_argument_errors_are_short_and_name_the_field(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    malformed = [{"op": "add", "key": f"k{i}", "category": "nope"} for i in range(500)]

    async def script(client: Any) -> None:
        await ok(client, "memory_begin", text="open")
        failed = await call(client, "memory_record", request_id="r2", delta=malformed)
        assert failed.error and len(failed.text) < 1_500, len(failed.text)
        assert "delta" in failed.text and "pydantic" not in failed.text
        assert "https://" not in failed.text
        failed = await call(client, "memory_record", request_id="r2", delta=[add("x")] * 0)
        assert failed.error and "delta" in failed.text
        failed = await call(client, "memory_history", namespace="elsewhere")
        assert failed.error and "namespace" in failed.text and "not permitted" in failed.text
        failed = await call(client, "memory_reveal", ids="not a list")
        assert failed.error and "ids" in failed.text
        # Some hosts send lists as JSON text: taken as the list it spells.
        listed = await ok(client, "memory_reveal", request_id="r2", ids='["r1.budget"]')
        assert listed["states"][0]["id"] == "r1.budget"
        await ok(client, "memory_discard", request_id="r2")

    hosted(store, repo.namespace, script)


def test_hostile_arguments_are_never_echoed_in_full(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    huge = "r" + "9" * 200_000

    async def script(client: Any) -> None:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("memory_record", {"request_id": huge, "delta": [add("x")]}),
            ("memory_commit", {"request_id": huge, "answer": "a"}),
            ("memory_discard", {"request_id": huge}),
            ("memory_reveal", {"ids": [huge]}),
            ("memory_why", {"state_id": huge}),
            ("memory_search", {"query": huge}),
            ("memory_remember", {"summary": huge, "category": "environment"}),
        ]
        await ok(client, "memory_begin", text="open")
        calls.append(
            (
                "memory_observe",
                {"request_id": "r2", "tool": "t" * 200_000, "arguments": {}, "output": "o"},
            )  # fmt: skip
        )
        for tool, arguments in calls:
            failed = await call(client, tool, **arguments)
            assert failed.error and len(failed.text) < 4_100, (tool, len(failed.text))

    hosted(store, repo.namespace, script)


def test_another_namespace_is_unreachable(
    store: Store, repo: Repository, other_repo: Repository
) -> None:
    first_requests(store, repo.namespace)
    secret = add("secret", "preference", "Other tenant's secret budget", "do not leak")
    tenant_b = Session.start(other_repo, "tenant b")
    tenant_b.record([secret])
    tenant_b.commit("kept", "b's request")

    async def script(client: Any) -> None:
        assert other_repo.namespace not in (await ok(client, "memory_index"))["text"]
        failed = await call(client, "memory_reveal", ids=["r1.secret"])
        assert failed.error and "unknown id" in failed.text
        found = await ok(client, "memory_search", query="tenant secret budget leak")
        assert "r1.secret" not in found["hits"]
        assert "do not leak" not in str(found) and "tenant" not in str(found["hits"])
        # Not in this namespace: nothing to forget here (as for an id already forgotten).
        gone = await ok(client, "memory_forget", id="r1.secret")
        assert (gone["nodes"], gone["relationships"]) == (0, 0)
        await ok(client, "memory_begin", text="mine")
        failed = await call(client, "memory_reveal", request_id="r2", ids=["r1.secret"])
        assert failed.error

    hosted(store, repo.namespace, script, allow_forget=True)
    assert other_repo.open_requests() == [] and len(repo.history()) == 1
    assert [s.id for s in other_repo.bundles()[0].states] == ["r1.secret"]


def test_search_hits_count_as_shown_and_nothing_else_opens(store: Store, repo: Repository) -> None:
    for n in range(1, 31):
        session = Session.start(repo, f"request {n}")
        facts = [add(f"k{i}", summary=f"fact {i} of request {n} " * 3) for i in range(8)]
        if n == 1:
            facts.append(add("passport", "environment", "Passport number kept", "X1234567 (PT)"))
        session.record(facts)
        session.commit("kept", f"request {n} with eight facts")

    async def script(client: Any) -> None:
        index = (await ok(client, "memory_index"))["text"]
        assert "r1.passport" not in index  # collapsed away: not shown
        hits = (await ok(client, "memory_search", query='passport "number" (+X~*)'))["hits"]
        assert list(hits)[0] == "r1.passport"
        assert hits["r1.passport"] == "[environment] Passport number kept"
        opened = await ok(client, "memory_reveal", ids=["r1.passport"])
        assert opened["states"][0]["content"] == "X1234567 (PT)"
        # Inside a request the hit is shown to that request, and kept in its draft.
        begun = await ok(client, "memory_begin", text="zeppelin")
        rid = begun["request_id"]
        failed = await call(client, "memory_reveal", request_id=rid, ids=["r1.passport"])
        assert failed.error and "unknown id" in failed.text  # inside a request PSA is strict
        await ok(client, "memory_search", query="passport", request_id=rid)
        saved = repo.open_request(rid)  # saved with the search, before any other step
        assert saved is not None and '"found":["r1.passport"' in saved.payload
        inside = await ok(client, "memory_reveal", request_id=rid, ids=["r1.passport"])
        assert inside["states"][0]["id"] == "r1.passport"
        kept = repo.open_request(rid)
        assert kept is not None and "r1.passport" in kept.payload  # the hit is kept with it
        await ok(client, "memory_discard", request_id=rid)
        empty = await ok(client, "memory_search", query="zeppelin")
        assert empty["hits"] == {}
        for hostile in ["*", "\\", '"', "a:b OR namespace:*", "AND OR NOT", "((("]:
            done = await call(client, "memory_search", query=hostile)
            assert not done.error and done.data is not None, (hostile, done.text)

    hosted(store, repo.namespace, script)


def test_forget_needs_the_flag_scrubs_drafts_and_search(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)

    async def without_flag(client: Any) -> None:
        assert "memory_forget" not in await tools_of(client)
        assert (await call(client, "memory_forget", id="r1")).error

    hosted(store, repo.namespace, without_flag)

    async def script(client: Any) -> None:
        tools = await tools_of(client)
        assert tools["memory_forget"]["annotations"]["destructiveHint"] is True
        fact = await ok(
            client,
            "memory_remember",
            summary="Lives at Rua Augusta 12, Lisbon",
            category="environment",
        )
        assert (await ok(client, "memory_search", query="augusta"))["hits"]
        begun = await ok(client, "memory_begin", text="where do I live")
        rid = begun["request_id"]
        await ok(client, "memory_reveal", request_id=rid, ids=[fact["state_id"]])
        # The request holds the user's words too: forgetting it forgets the fact for good.
        gone = await ok(client, "memory_forget", id=fact["state_id"].split(".")[0])
        assert gone["nodes"] == 2
        draft = repo.open_request(rid)
        assert draft is not None and "Augusta" not in draft.payload
        assert (await ok(client, "memory_search", query="augusta"))["hits"] == {}
        failed = await call(client, "memory_reveal", ids=[fact["state_id"]])
        assert failed.error and "unknown id" in failed.text  # forgotten: no longer shown
        await ok(client, "memory_commit", request_id=rid, answer="forgotten")
        assert (await ok(client, "memory_forget", id="r1"))["nodes"] >= 2

    hosted(store, repo.namespace, script, allow_forget=True)
    assert [b.request.id for b in repo.bundles()] == ["r3"]
    assert "Augusta" not in str(repo.bundles())


def test_forget_repeated_succeeds_and_says_the_id_was_gone(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)

    async def already_gone(client: Any, record_id: str) -> None:
        again = await call(client, "memory_forget", id=record_id)
        assert not again.error, again.text
        assert again.data == {"nodes": 0, "relationships": 0}
        assert "not in memory (already forgotten" in again.text
        assert "nothing was deleted" in again.text

    async def script(client: Any) -> None:
        fact = await ok(
            client, "memory_remember", summary="Lives in Lisbon", category="environment"
        )
        state = fact["state_id"]
        request = state.split(".")[0]
        first = await call(client, "memory_forget", id=state)
        assert not first.error and first.text.startswith(f"forgot {state}: 1 node, ")
        await already_gone(client, state)
        assert (await ok(client, "memory_forget", id=request))["nodes"] == 1
        await already_gone(client, request)
        typo = await call(client, "memory_forget", id="r1 budget")
        assert typo.error and "neither a request id" in typo.text

    hosted(store, repo.namespace, script, allow_forget=True)
    assert [b.request.id for b in repo.bundles()] == ["r1"]


def test_remember_is_one_request_in_one_call(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)

    async def script(client: Any) -> None:
        fact = await ok(
            client, "memory_remember", summary="Prefers an aisle seat", category="preference"
        )
        assert fact == {"state_id": "r2.prefers_aisle_seat"}
        opened = await ok(client, "memory_reveal", ids=[fact["state_id"]])
        assert opened["states"][0]["content"] == "Prefers an aisle seat"
        newer = await ok(
            client,
            "memory_remember",
            summary="Prefers a window seat now",
            category="preference",
            key="seat",
            relations=[{"type": "SUPERSEDES", "target": fact["state_id"]}],
        )
        assert newer["state_id"] == "r3.seat"
        assert "SUPERSEDED by r3.seat" in (await ok(client, "memory_index"))["text"]
        [stale] = (await ok(client, "memory_reveal", ids=[fact["state_id"]]))["states"]
        assert stale["relations"] == [{"type": "SUPERSEDES", "direction": "in", "other": "r3.seat"}]
        failed = await call(
            client,
            "memory_remember",
            summary="x",
            category="environment",
            relations=[{"type": "DEPENDS_ON", "target": "r9.unknown"}],
        )
        assert failed.error and "r9.unknown" in failed.text
        await ok(client, "memory_begin", text="open one")
        beside = await ok(
            client, "memory_remember", summary="Lives in Porto", category="environment"
        )  # r4 stays open
        assert beside["state_id"] == "r5.lives_porto"
        await ok(client, "memory_discard", request_id="r4")
        again = await call(client, "memory_discard", request_id="r4")  # idempotent, as annotated
        assert not again.error and "r4 was discarded" in again.text
        assert again.data == {"discarded": True, "already_discarded": True}
        failed = await call(client, "memory_commit", request_id="r4", answer="x")
        assert failed.error and "r4 was discarded" in failed.text

    hosted(store, repo.namespace, script)
    assert [b.request.id for b in repo.bundles()] == ["r1", "r2", "r3", "r5"]  # refused: none
    assert repo.next_request_seq() == 6 and repo.open_requests() == []


def test_a_host_reads_back_what_it_committed_when_the_index_lists_it_collapsed(
    store: Store, repo: Repository
) -> None:
    from flowstate import FlowState

    fs = FlowState(store, repo.namespace)
    for i in range(60):  # enough requests that the index lists even the newest collapsed
        fact = {"op": "add", "key": "seat", "category": "preference", "summary": f"seat {i}",
                "content": f"seat {i}"}  # fmt: skip
        fs.remember([fact], f"Prefers seat {i}")

    async def script(client: Any) -> None:
        rid = (await ok(client, "memory_begin", text="A new seat"))["request_id"]
        op = {
            "op": "add",
            "key": "seat",
            "category": "preference",
            "summary": "seat 61",
            "content": "61",
        }
        await ok(client, "memory_record", request_id=rid, delta=[op])
        await ok(client, "memory_commit", request_id=rid, answer="ok")
        # Its one state's summary is the request's (the host gave none).
        assert f"{rid}: seat 61  [1 state; collapsed" in (await ok(client, "memory_index"))["text"]
        opened = await ok(client, "memory_reveal", ids=[f"{rid}.seat"])
        assert [s["id"] for s in opened["states"]] == [f"{rid}.seat"]
        unseen = await call(client, "memory_reveal", ids=["r60.seat"])  # never shown to it
        assert unseen.error and "unknown id" in unseen.text

    hosted(store, repo.namespace, script)


def test_reveal_opens_what_it_can_and_says_what_it_cannot(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    evidence = Session.start(repo, "with evidence")
    oid = evidence.observe("lookup", {"q": "x"}, "raw output of the lookup")
    evidence.record([add("cited", summary="A cited fact", evidence=[oid])])
    evidence.commit("kept", "cited one")

    async def script(client: Any) -> None:
        mixed = await ok(client, "memory_reveal", ids=["r1.budget", "r9.nothing", "r2.cited"])
        assert [s["id"] for s in mixed["states"]] == ["r1.budget", "r2.cited"]
        assert any("r9.nothing" in reason for reason in mixed["not_opened"])
        begun = await ok(client, "memory_begin", text="why is it cited")
        rid = begun["request_id"]
        cited = await ok(client, "memory_reveal", request_id=rid, ids=["r2.cited"])
        ends = [x["other"] for x in cited["states"][0]["relations"]]
        assert ends == ["r2.o1"]
        opened = await ok(client, "memory_reveal", request_id=rid, ids=["r2.o1"])
        assert opened["observations"][0]["output"] == "raw output of the lookup"
        assert opened["observations"][0]["tool"] == "lookup"
        await ok(client, "memory_discard", request_id=rid)

    hosted(store, repo.namespace, script)


def test_a_restarted_server_picks_the_request_up_from_its_draft(
    store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)
    held: dict[str, str] = {}

    async def start(client: Any) -> None:
        begun = await ok(client, "memory_begin", text="Book a hotel in Lisbon")
        held.update(request_id="r2", handle=begun["handle"])
        await ok(client, "memory_reveal", **held, ids=["r1.budget"])

    async def finish(client: Any) -> None:
        # The same host, reconnected to a new server: its handle still opens its request.
        await ok(client, "memory_record", **held, delta=[add("plan", "decision")])
        await ok(client, "memory_commit", **held, answer="done")
        again = await ok(client, "memory_commit", **held, answer="done")
        assert again["already_committed"] is True and again["states_added"] == ["r2.plan"]
        failed = await call(client, "memory_record", **held, delta=[add("late")])
        assert failed.error and "already committed" in failed.text

    hosted(store, repo.namespace, start)
    assert [r.request_id for r in repo.open_requests()] == ["r2"]
    hosted(store, repo.namespace, finish)
    [*_, bundle] = repo.bundles()
    assert [s.id for s in bundle.states] == ["r2.plan"] and repo.open_requests() == []


def test_a_large_reveal_is_paged_as_data(store: Store, repo: Repository) -> None:
    long = "x" * 3_900
    session = Session.start(repo, "long")
    session.record([add("big", "artifact", "a long artifact", long)])
    session.commit("kept", "long one")

    async def script(client: Any) -> None:
        await ok(client, "memory_begin", text="read it")
        first = await call(client, "memory_reveal", request_id="r2", ids=["r1.big"])
        assert not first.error and len(first.text) < 1_500 and "page 1 of" in first.text
        assert first.data is not None
        pages = first.data["pages"]
        parts = [first.data["states"][0]]
        for n in range(2, pages + 1):
            parts += (await ok(client, "memory_reveal", request_id="r2", ids=["r1.big"], page=n))[
                "states"
            ]
        assert [p["part"] for p in parts] == list(range(1, pages + 1))
        assert "".join(p["content"] for p in parts) == long
        failed = await call(client, "memory_reveal", request_id="r2", ids=["r1.big"], page=99)
        assert failed.error
        await ok(client, "memory_discard", request_id="r2")

    hosted(store, repo.namespace, script, page_chars=1_000)


def test_an_abandoned_request_expires(store: Store, repo: Repository) -> None:
    fs = FlowState(store, repo.namespace)
    walked = fs.begin("walked away")
    kept = fs.begin("still in use")
    assert len(repo.open_requests()) == 2 and fs.expire(idle_s=60) == []
    time.sleep(1.2)
    assert kept.handle is not None and walked.handle is not None
    fs.session(kept.request_id, kept.handle)  # used: its idle time starts again
    assert fs.expire(idle_s=1) == [walked.request_id]
    assert [r.request_id for r in repo.open_requests()] == [kept.request_id]
    with pytest.raises(UsageError, match="discarded after 1 s without a call"):
        fs.session(walked.request_id, walked.handle)
    fs.close()


def test_a_draft_of_a_live_writer_is_never_expired_and_its_holder_is_named(
    store: Store, repo: Repository
) -> None:
    """Another writer's request is judged by its hold and its draft's last save, not by when
    this front door first saw it."""
    fs = FlowState(store, repo.namespace)
    elsewhere = Session.start(repo, "worked on by another server")
    assert elsewhere.handle is not None
    time.sleep(2.2)
    assert fs.expire(idle_s=1) == []  # idle 2 s, but its writer is alive and holds it
    with pytest.raises(RequestHeld, match=r"writer .* holds it until"):
        fs.session(elsewhere.request_id, elsewhere.handle)
    mine = fs.begin("a second host")  # beside it, never refused
    assert mine.request_id != elsewhere.request_id
    elsewhere.__exit__(None, None, None)  # its server stops: hold released, draft kept
    assert fs.expire(idle_s=1) == [elsewhere.request_id]  # last saved 2 s ago, over 1 s
    fs.close()


def _held(repo: Repository, request_id: str) -> bool:
    request = repo.open_request(request_id)
    assert request is not None
    return request.held


def test_a_dropped_session_lets_its_request_go(repo: Repository) -> None:
    import gc
    import time

    session = Session.start(repo, "dropped")
    rid = session.request_id
    assert _held(repo, rid)
    del session
    gc.collect()
    deadline = time.monotonic() + 10
    while _held(repo, rid):
        assert time.monotonic() < deadline, "the request is still held"
        time.sleep(0.1)
    resumed = Session.resume(repo, rid)  # another writer can go on at once
    assert resumed.request_id == rid
    resumed.discard()


def test_a_record_is_told_a_state_it_opened_was_superseded_meanwhile(
    store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)

    async def script(client: Any) -> None:
        rid = (await ok(client, "memory_begin", text="Book a hotel"))["request_id"]
        await ok(client, "memory_reveal", request_id=rid, ids=["r1.budget"])
        other = Session.start(repo, "lower the budget")  # another host, meanwhile
        other.reveal(["r1.budget"])
        lowered = add("budget", "constraint", "Budget 90", "At most 90 EUR",
                      relations=[{"type": "SUPERSEDES", "target": "r1.budget"}])  # fmt: skip
        other.record([lowered])
        newer = other.commit("lowered").request_id
        done = await call(client, "memory_record", request_id=rid, delta=[add("hotel")])
        assert not done.error and done.data is not None
        assert done.data["states"] == [f"{rid}.hotel"]
        [notice] = done.data["notices"]
        assert f"superseded by {newer}.budget" in notice and "note: r1.budget" in done.text

    hosted(store, repo.namespace, script)


def test_an_observation_opens_with_its_arguments_as_an_object(
    store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)
    fs = FlowState(store, repo.namespace)
    s = fs.begin("Book a hotel")
    s.observe("search_hotels", {"city": "Lisbon", "max": 150}, "Casa Azul, 120 EUR")
    s.record([add("hotel", "decision") | {"evidence": ["r2.o1"]}])
    s.commit("Casa Azul", "Hotel")

    async def script(client: Any) -> dict[str, Any]:
        await ok(client, "memory_reveal", ids=["r2.hotel"])  # its evidence shows r2.o1
        return await ok(client, "memory_reveal", ids=["r2.o1"])

    opened = hosted(store, repo.namespace, script)
    assert opened["observations"][0]["arguments"] == {"city": "Lisbon", "max": 150}
