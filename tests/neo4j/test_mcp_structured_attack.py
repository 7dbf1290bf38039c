"""An outside attack on what a host that shows its model only the structured content reads:
a result whose text says more than its structured content."""

from __future__ import annotations

from typing import Any

import pytest

from flowstate.store import Repository, Store
from tests.neo4j.mcp_host import call, hosted, ok

pytestmark = pytest.mark.neo4j


def test_a_repeated_discard_says_so_in_its_structured_content(
    store: Store, repo: Repository
) -> None:
    async def script(client: Any) -> tuple[Any, Any]:
        begun = await ok(client, "memory_begin", text="Plan a trip")
        rid = begun["request_id"]
        first = await call(client, "memory_discard", request_id=rid)
        again = await call(client, "memory_discard", request_id=rid)
        return first, again

    first, again = hosted(store, repo.namespace, script)
    assert not first.error and not again.error
    assert "again" in again.text and "again" not in first.text  # the text tells them apart
    assert first.data == {"discarded": True}
    assert again.data == {"discarded": True, "already_discarded": True}


def test_discarding_a_committed_request_does_not_say_it_was_discarded(
    store: Store, repo: Repository
) -> None:
    async def script(client: Any) -> Any:
        begun = await ok(client, "memory_begin", text="Plan a trip")
        rid = begun["request_id"]
        await ok(client, "memory_commit", request_id=rid, answer="Planned", summary="Trip")
        return await call(client, "memory_discard", request_id=rid)

    after = hosted(store, repo.namespace, script)
    assert "committed" in after.text
    assert after.error or after.data != {"discarded": True}, (after.text, after.data)
