"""`forget_all` through the front door, sync and async: refused while a live writer holds a
request (before and after the confirmation), refused when there is nothing to forget, and
stopped by a confirmation that raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from flowstate import AsyncFlowState, FlowState, NamespaceBusy, NotFoundError
from flowstate.store import Repository, Store
from flowstate.store.forgetting import NamespaceContents
from tests.neo4j.conftest import Factory
from tests.neo4j.engine_helpers import Shell

pytestmark = pytest.mark.neo4j

LIVE = "other-host:4242:cafe"


@pytest.fixture(params=["sync", "async"])
def forget_all(
    request: pytest.FixtureRequest, store: Store, repo: Repository
) -> Callable[..., Any]:
    """`fs.forget_all(confirm)` of the test's namespace, through `FlowState` or (awaited)
    through `AsyncFlowState`."""
    if request.param == "sync":
        return FlowState(store, repo.namespace).forget_all
    shell: Shell = request.getfixturevalue("async_shell")
    assert shell.store is not None
    fs = AsyncFlowState(shell.store, repo.namespace)
    return lambda confirm=None: shell.wait(fs.forget_all(confirm))


def test_forget_all_shows_what_goes_then_deletes_it(forget_all, repo, make: Factory) -> None:  # noqa: ANN001
    repo.commit(make.bundle(1, states=["a", "b"]))
    repo.save_draft("r2", "{}", owner=LIVE, first=True)
    repo.run(repo.ops.release_hold("r2", LIVE))  # interrupted: nobody runs it
    shown: list[NamespaceContents] = []
    deleted = forget_all(shown.append)
    assert shown == [
        NamespaceContents(namespace=repo.namespace, requests=1, interrupted=["r2"], nodes=4)
    ]
    assert shown[0].describe().endswith("(1 request, the interrupted request r2; 4 nodes)")
    assert deleted.nodes == 4 and repo.counts().nodes == 0 and repo.stamp().epoch is None
    assert repo.next_request_seq() == 1  # ids start again


def test_forget_all_is_refused_while_a_live_writer_holds_a_request(forget_all, repo) -> None:  # noqa: ANN001
    repo.save_draft("r1", "{}", owner=LIVE, first=True)
    asked: list[NamespaceContents] = []
    with pytest.raises(NamespaceBusy, match=f"writer {LIVE} runs request r1") as refused:
        forget_all(asked.append)
    assert refused.value.owner == LIVE and asked == []  # refused before asking
    assert [r.request_id for r in repo.open_requests()] == ["r1"]


def test_forget_all_is_refused_when_a_request_begins_while_it_asks(forget_all, repo, make) -> None:  # noqa: ANN001
    repo.commit(make.bundle(1, states=["a"]))

    def a_writer_begins(_contents: NamespaceContents) -> None:
        repo.save_draft("r2", "{}", owner=LIVE, first=True)

    with pytest.raises(NamespaceBusy, match=f"writer {LIVE} runs request r2"):
        forget_all(a_writer_begins)
    assert repo.counts().nodes == 3  # r1, r1.a and r2's draft: nothing deleted


def test_forget_all_says_when_there_is_nothing_to_forget(forget_all, repo) -> None:  # noqa: ANN001
    with pytest.raises(NotFoundError, match="holds nothing to forget"):
        forget_all()
    repo.run(repo.ops.allocate_request_seq())  # only an id counter: still something to forget
    assert forget_all().nodes == 0 and repo.stamp().epoch is None


def test_a_confirmation_that_raises_deletes_nothing(forget_all, repo, make) -> None:  # noqa: ANN001
    repo.commit(make.bundle(1, states=["a"]))

    def no(_contents: NamespaceContents) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        forget_all(no)
    assert repo.counts().nodes == 2


def test_the_async_confirmation_may_be_awaited(async_shell: Shell, repo, make) -> None:  # noqa: ANN001
    assert async_shell.store is not None
    repo.commit(make.bundle(1, states=["a"]))
    fs = AsyncFlowState(async_shell.store, repo.namespace)
    shown: list[int] = []

    async def confirm(contents: NamespaceContents) -> None:
        shown.append(contents.requests)

    assert async_shell.wait(fs.forget_all(confirm)).nodes == 2 and shown == [1]
