"""The shells hold no rule of their own: a refusal the library makes comes out of the CLI and
the MCP server as the same refusal, in the library's words, and changes nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from flowstate import FlowState
from flowstate.engine.session import Session
from flowstate.errors import FlowStateError
from flowstate.store import Repository, Store
from tests.neo4j.engine_helpers import add
from tests.neo4j.mcp_host import call, first_requests, hosted

pytestmark = pytest.mark.neo4j


def _library_refusal(act: Callable[[], Any]) -> str:
    with pytest.raises(FlowStateError) as refused:
        act()
    return str(refused.value)


def _mcp_refusal(store: Store, namespace: str, tool: str, **arguments: Any) -> str:
    async def script(client: Any) -> str:
        done = await call(client, tool, **arguments)
        assert done.error, (tool, done.text)
        return done.text

    return hosted(store, namespace, script)


def _cli_refusal(cli: Any, *args: str, code: int) -> str:
    done = cli(*args)
    assert done.exit_code == code, done.output  # 2: a usage error, 1: refused at the store
    return " ".join(done.stderr.split())


def _same(expected: str, *said: str) -> None:
    core = " ".join(expected.split())
    for text in said:
        assert core in " ".join(text.split()), (core, text)


def test_a_request_another_writer_runs_is_not_discarded_anywhere(
    cli: Any, store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)
    elsewhere = Session.start(repo, "run by another writer")
    rid = elsewhere.request_id
    fs = FlowState(store, repo.namespace)
    expected = _library_refusal(lambda: fs.discard(rid))
    prefix = expected.split(" until ")[0]  # the expiry moves while the hold is renewed
    assert "holds it" in prefix
    _same(
        prefix,
        _cli_refusal(cli, "discard", rid, "-N", repo.namespace, "--yes", code=1),
        # Its own host, reconnected to another server: refused while the writer runs it.
        _mcp_refusal(
            store, repo.namespace, "memory_discard", request_id=rid, handle=elsewhere.handle
        ),
    )
    assert [r.request_id for r in repo.open_requests()] == [rid]  # still there, still held
    elsewhere.discard()


def test_a_malformed_state_id_is_refused_the_same_way(
    cli: Any, store: Store, repo: Repository
) -> None:
    first_requests(store, repo.namespace)
    fs = FlowState(store, repo.namespace)
    expected = _library_refusal(lambda: fs.why("r1..budget"))
    _same(
        expected,
        _cli_refusal(cli, "why", "r1..budget", "-N", repo.namespace, code=2),
        _mcp_refusal(store, repo.namespace, "memory_why", state_id="r1..budget"),
    )


def test_an_id_never_shown_stays_closed_for_a_reader(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    [expected] = FlowState(store, repo.namespace).browse().open(["r1.secret"]).rejections
    _same(expected, _mcp_refusal(store, repo.namespace, "memory_reveal", ids=["r1.secret"]))


def test_a_past_state_is_never_updated_by_a_host(store: Store, repo: Repository) -> None:
    first_requests(store, repo.namespace)
    update = {"op": "update", "key": "budget", "summary": "200 EUR"}
    session = FlowState(store, repo.namespace).begin("change the budget")
    recorded = session.record([update])
    assert not recorded.applied
    [expected] = recorded.rejections
    session.discard()
    before = repo.counts()

    async def script(client: Any) -> str:
        begun = await call(client, "memory_begin", text="change the budget")
        assert begun.data is not None
        rid = begun.data["request_id"]
        done = await call(client, "memory_record", request_id=rid, delta=[update])
        await call(client, "memory_record", request_id=rid, delta=[add("fine")])
        await call(client, "memory_discard", request_id=rid)
        return done.text

    _same(expected.replace(session.request_id, "r"), hosted(store, repo.namespace, script))
    assert repo.counts() == before
