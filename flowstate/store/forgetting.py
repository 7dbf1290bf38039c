"""Deleting from a namespace: forget a request, a state or everything; retention.

Each deletion raises the namespace's stamp and keeps its counter (ids are never reused) in
the same transaction, and scrubs what it deleted from drafts (`flowstate.store.drafts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from flowstate.errors import NamespaceBusy, ValidationFailed
from flowstate.models import Category
from flowstate.store import drafts
from flowstate.store.base import GraphCounts, deleted
from flowstate.store.catalog import Q
from flowstate.store.codec import check_id, shown
from flowstate.store.connection import Tx
from flowstate.store.writing import Writing


class Forgetting(Writing):
    """Forgetting and retention of one namespace."""

    def forget_request(self, request_id: str) -> GraphCounts:
        """Delete a request with its states, observations and relationships; re-link NEXT.
        Drafts that copied any of it are scrubbed; its id is never handed out again."""
        self._writable("forget")
        check_id("request", request_id)
        return self._forget(Q.FORGET_REQUEST, request_id, drafts.of_request(request_id))

    def forget_state(self, state_id: str) -> GraphCounts:
        """Delete one state and all its relationships, and scrub it from drafts."""
        self._writable("forget")
        check_id("state", state_id)
        return self._forget(Q.FORGET_STATE, state_id, drafts.of_ids({state_id}))

    def forget_namespace(self, *, force: bool = False) -> GraphCounts:
        """Delete everything the namespace holds, drafts included; NamespaceBusy while a live
        writer runs a request there, unless `force` (a request that runs on, or begins
        meanwhile, finds its draft gone at its next save and writes nothing)."""
        self._writable("forget")
        running = [] if force else [r for r in self.run(self.ops.open_requests()) if r.held]
        if running:
            first = running[0]
            raise NamespaceBusy(
                f"namespace {self._namespace!r} is busy: writer {first.holder} runs request "
                f"{first.request_id} there ({len(running)} running in all); wait until they "
                "end, or until their holds lapse",
                owner=first.holder,
                expires=first.expires,
            )
        params = {"namespace": self._namespace}
        counts = deleted(self._store.write_batched(Q.FORGET_NAMESPACE, params))
        self._write(Q.FORGET_NAMESPACE_NODE)  # last: a cut-short forget keeps the counter
        return counts

    def expire(self, kind: Category | Literal["observation"], before: datetime) -> GraphCounts:
        """Retention: delete the namespace's states of one category (or its observations)
        created before `before`, with all their relationships; returns what was deleted.

            repo.expire(Category.ENVIRONMENT, now - timedelta(days=90))
            repo.expire("observation", now - timedelta(days=30))
        """
        self._writable("expire")
        if not isinstance(before, datetime) or before.utcoffset() is None:
            # A naive datetime would compare as null in Cypher and silently expire nothing.
            raise ValidationFailed(f"expire needs a timezone-aware datetime, not {shown(before)}")
        if kind == "observation":
            name = Q.EXPIRE_OBSERVATIONS
            params: dict[str, object] = {"before": before}
        else:
            try:
                category = Category(kind)
            except ValueError:
                kinds = ", ".join([*(c.value for c in Category), "observation"])
                raise ValidationFailed(f"cannot expire {shown(kind)}: use one of {kinds}") from None
            name = Q.EXPIRE_STATES
            params = {"category": category.value, "before": before}

        def work(tx: Tx) -> GraphCounts:
            [row] = tx.run(name, {"namespace": self._namespace, **params})
            if row["ids"]:
                tx.run(Q.TOUCH_NAMESPACE, {"namespace": self._namespace})
                self._scrub_drafts(tx, drafts.of_ids(set(row["ids"])))
            return deleted(tx.changes)

        return self._store.transaction(work)

    def expiring(
        self, cutoffs: Mapping[Category | Literal["observation"], datetime]
    ) -> dict[str, int]:
        """How many records `expire` would delete now, per kind (states of a category, or
        observations), for a preview before a destructive retention run."""
        for before in cutoffs.values():
            if not isinstance(before, datetime) or before.utcoffset() is None:
                raise ValidationFailed(f"expiring needs timezone-aware datetimes, not {before!r}")
        rows = self._read(
            Q.RETENTION_PREVIEW,
            cutoffs=[{"kind": str(k), "before": b} for k, b in cutoffs.items()],
        )
        return {row["kind"]: row["records"] for row in rows}

    def _forget(self, name: Q, record_id: str, gone: drafts.Gone) -> GraphCounts:
        def work(tx: Tx) -> GraphCounts:
            # First: the counter must cover this request before it can be deleted.
            tx.run(Q.TOUCH_NAMESPACE, {"namespace": self._namespace})
            [row] = tx.run(name, {"namespace": self._namespace, "id": record_id})
            if not row["forgotten"]:
                raise self._not_found([record_id])  # rolls the touch back too
            self._scrub_drafts(tx, gone)
            return deleted(tx.changes)

        return self._store.transaction(work)

    def _scrub_drafts(self, tx: Tx, gone: drafts.Gone) -> None:
        for row in tx.run(Q.DRAFTS, {"namespace": self._namespace}):
            scrubbed = drafts.scrub(row["payload"], gone)
            if scrubbed is not None:
                params = {"request_id": row["request_id"], "payload": scrubbed}
                tx.run(Q.SCRUB_DRAFT, {"namespace": self._namespace, **params})
