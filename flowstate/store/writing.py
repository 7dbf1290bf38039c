"""The writer's side of a namespace: its lease, the request seqs it hands out, drafts.

See `flowstate.store.namespace_node` for the counter node these live on, and
`flowstate.engine.lease` for how an agent holds the lease while a request runs.
"""

from __future__ import annotations

from flowstate.errors import ValidationFailed
from flowstate.store import drafts
from flowstate.store.base import RepositoryBase
from flowstate.store.catalog import Q
from flowstate.store.codec import check_id, check_text
from flowstate.store.connection import Tx
from flowstate.store.namespace_node import (
    DEFAULT_LEASE_S,
    Lease,
    Stamp,
    check_ttl,
    hold,
    lease_of,
    stamp_of,
)


class Writing(RepositoryBase):
    """Request seqs, the writer lease and drafts of one namespace."""

    def stamp(self) -> Stamp:
        """Changes whenever something of the namespace is deleted or imported (cheap)."""
        [row] = self._read(Q.NAMESPACE_STAMP)
        return stamp_of(row)

    def lease(self) -> Lease | None:
        """The writer running a request in the namespace now, if any (unexpired lease)."""
        [row] = self._read(Q.NAMESPACE_STAMP)
        return lease_of(row)

    def allocate_request_seq(self) -> int:
        """Hand out the next request seq for good: it is never handed out again."""
        self._writable("start a request")
        rows, _ = self._write(Q.ALLOCATE_REQUEST_SEQ)
        return int(rows[0]["seq"])

    def acquire_lease(self, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> None:
        """Take (or renew) the namespace's writer lease for `ttl_s` seconds; NamespaceBusy
        naming the holder when another live writer has it."""
        self._writable("take the writer lease")
        ttl_s = check_ttl(ttl_s)
        self._store.transaction(lambda tx: hold(tx, self._namespace, owner, ttl_s))

    def take_over_lease(self, dead: str, owner: str, ttl_s: int = DEFAULT_LEASE_S) -> bool:
        """Take the lease from a holder known to be dead; False if `dead` no longer holds it."""
        self._writable("take the writer lease")
        rows, _ = self._write(Q.TAKE_OVER_LEASE, dead=dead, owner=owner, ttl_s=check_ttl(ttl_s))
        return int(rows[0]["taken"]) > 0

    def release_lease(self, owner: str) -> bool:
        """Give the lease back; False when `owner` did not hold it (any more)."""
        self._writable("release the writer lease")
        rows, _ = self._write(Q.RELEASE_LEASE, owner=owner)
        return int(rows[0]["released"]) > 0

    def save_draft(
        self,
        request_id: str,
        payload: str,
        *,
        owner: str | None = None,
        lease_s: int = DEFAULT_LEASE_S,
    ) -> None:
        """Upsert the in-flight request's serialized active state (JSON text).

        With `owner`, it is saved only while `owner` holds the writer lease (renewing it).
        Past states or observations it copied that were forgotten meanwhile (by another
        process) are scrubbed from it first.
        """
        self._writable("save a draft")
        check_id("request", request_id)
        if not isinstance(payload, str):
            raise ValidationFailed("a draft payload must be a JSON string")
        check_text(request_id, "draft payload", payload)

        def work(tx: Tx) -> None:
            if owner is not None:
                hold(tx, self._namespace, owner, lease_s)
            state_ids, observation_ids = drafts.copied_ids(payload)
            kept = payload
            if state_ids or observation_ids:
                [row] = tx.run(
                    Q.EXISTING_IDS,
                    {
                        "namespace": self._namespace,
                        "state_ids": state_ids,
                        "observation_ids": observation_ids,
                    },
                )
                gone = set(state_ids + observation_ids) - set(row["ids"])
                kept = (drafts.scrub(payload, gone.__contains__) if gone else None) or payload
            self._save(tx, request_id, kept)

        self._store.transaction(work)

    def discard_draft(self, request_id: str) -> bool:
        """Drop a request's draft; False when there was none."""
        self._writable("discard a draft")
        rows, _ = self._write(Q.DISCARD_DRAFT, request_id=check_id("request", request_id))
        return int(rows[0]["deleted"]) > 0

    def _save(self, tx: Tx, request_id: str, payload: str) -> None:
        params = {"namespace": self._namespace, "request_id": request_id, "payload": payload}
        tx.run(Q.SAVE_DRAFT, params)
