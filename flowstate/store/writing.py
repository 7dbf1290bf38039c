"""The writer's side of a namespace: its lease, the request seqs it hands out, drafts.

See `flowstate.store.namespace_node` for the counter node these live on, and
`flowstate.engine.lease` for how an agent holds the lease while a request runs. Each method
runs the one plan of `flowstate.store.ops` that the async repository runs too.
"""

from __future__ import annotations

from flowstate.store.base import RepositoryBase
from flowstate.store.namespace_node import DEFAULT_LEASE_S, Lease, Stamp


class Writing(RepositoryBase):
    """Request seqs, the writer lease and drafts of one namespace."""

    def stamp(self) -> Stamp:
        """Changes whenever something of the namespace is deleted or imported (cheap)."""
        return self.run(self.ops.stamp())

    def lease(self) -> Lease | None:
        """The writer running a request in the namespace now, if any (unexpired lease)."""
        return self.run(self.ops.lease())

    def allocate_request_seq(self) -> int:
        """Hand out the next request seq for good: it is never handed out again."""
        return self.run(self.ops.allocate_request_seq())

    def acquire_lease(self, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> None:
        """Take (or renew) the namespace's writer lease for `ttl_s` seconds; NamespaceBusy
        naming the holder when another live writer has it."""
        self.run(self.ops.acquire_lease(owner, ttl_s))

    def take_over_lease(self, dead: str, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> bool:
        """Take the lease from a holder known to be dead; False if `dead` no longer holds it."""
        return self.run(self.ops.take_over_lease(dead, owner, ttl_s))

    def release_lease(self, owner: str) -> bool:
        """Give the lease back; False when `owner` did not hold it (any more)."""
        return self.run(self.ops.release_lease(owner))

    def save_draft(
        self,
        request_id: str,
        payload: str,
        *,
        owner: str | None = None,
        lease_s: int = DEFAULT_LEASE_S,
    ) -> None:
        """Upsert the in-flight request's serialized active state (JSON text); see
        `Ops.save_draft`."""
        self.run(self.ops.save_draft(request_id, payload, owner=owner, lease_s=lease_s))

    def discard_draft(self, request_id: str) -> bool:
        """Drop a request's draft; False when there was none."""
        return self.run(self.ops.discard_draft(request_id))
