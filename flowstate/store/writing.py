"""The writer's side of a namespace: the request seqs it hands out, open requests and their
holds, drafts.

See `flowstate.store.namespace_node` for the counter node, and `flowstate.store.holds` for who
runs which open request. Each method runs the one plan of `flowstate.store.ops` that the async
repository runs too.
"""

from __future__ import annotations

from flowstate.store.base import RepositoryBase
from flowstate.store.holds import DEFAULT_HOLD_S, OpenRequest
from flowstate.store.namespace_node import Stamp


class Writing(RepositoryBase):
    """Request seqs, open requests, holds and drafts of one namespace."""

    def stamp(self) -> Stamp:
        """Changes whenever something of the namespace is deleted, imported or committed."""
        return self.run(self.ops.stamp())

    def allocate_request_seq(self) -> int:
        """Hand out the next request seq for good: it is never handed out again."""
        return self.run(self.ops.allocate_request_seq())

    def open_requests(self) -> list[OpenRequest]:
        """Every open request (running or interrupted) with its holder, newest first."""
        return self.run(self.ops.open_requests())

    def open_request(self, request_id: str) -> OpenRequest | None:
        """One open request, or None when it is not open."""
        return self.run(self.ops.open_request(request_id))

    def take_over(self, request_id: str, owner: str, hold_s: int = DEFAULT_HOLD_S) -> str:
        """Hold a lapsed (or own) request for `owner`; its payload (see `Ops.take_over`)."""
        return self.run(self.ops.take_over(request_id, owner, hold_s))

    def save_draft(
        self,
        request_id: str,
        payload: str,
        *,
        owner: str,
        hold_s: int = DEFAULT_HOLD_S,
        first: bool = False,
    ) -> None:
        """Save a request's serialized active state while `owner` holds it (`Ops.save_draft`)."""
        self.run(self.ops.save_draft(request_id, payload, owner=owner, hold_s=hold_s, first=first))

    def discard_draft(self, request_id: str, owner: str | None = None) -> bool:
        """Drop a request's draft; False when there was none (see `Ops.discard_draft`)."""
        return self.run(self.ops.discard_draft(request_id, owner))
