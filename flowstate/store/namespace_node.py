"""The namespace's counter node: ids handed out, the generation, and the writer lease.

One `(:Namespace {namespace})` node per namespace holds
- `last_seq`: the highest request seq ever handed out. Forgetting a request (even the newest)
  or expiring its states never lowers it, so an id like `r7` names one request for good.
- `epoch` and `generation`: a stamp that changes whenever something of the namespace is
  deleted (forget, retention) or imported. A live agent compares it at each request start with
  the stamp its cached index was built at, and rebuilds the index when it differs; commits are
  picked up incrementally by seq and need no stamp.
- `lease_owner`, `lease_expires`: the one writer allowed to run a request in the namespace.

Only `flowstate forget --all` (the whole namespace) deletes the node; ids then start at r1.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from flowstate.errors import NamespaceBusy, ValidationFailed
from flowstate.store.catalog import Q
from flowstate.store.connection import Store
from flowstate.store.plans import Row, Stmt, TxWork

DEFAULT_LEASE_S = 60  # how long a writer's lease lasts unless renewed (it is, every step)
MAX_LEASE_S = 86_400


class Stamp(BaseModel):
    """What a cached index was built at; a different stamp means something was deleted."""

    model_config = ConfigDict(frozen=True)

    epoch: str | None = None
    generation: int = 0


class Lease(BaseModel):
    """The writer currently holding a namespace, and until when."""

    model_config = ConfigDict(frozen=True)

    owner: str
    expires: datetime


class DraftAge(BaseModel):
    """The open request of a namespace, how long since its draft was saved, and its writer."""

    model_config = ConfigDict(frozen=True)

    request_id: str
    idle_s: int
    lease: Lease | None = None


class NamespaceSummary(BaseModel):
    """One namespace of the database, counted (for `flowstate namespaces`)."""

    model_config = ConfigDict(frozen=True)

    namespace: str
    requests: int
    states: int
    observations: int
    decisions: int
    drafts: int
    last_seq: int
    writer: str | None = None


def list_namespaces(store: Store) -> list[NamespaceSummary]:
    """Every namespace that holds anything, with its counts, in name order."""
    return [NamespaceSummary.model_validate(row) for row in store.read(Q.NAMESPACES, {})]


def writer_id() -> str:
    """A name for this writer that says where it runs: host, process id and a random tag."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def stamp_of(row: Row) -> Stamp:
    return Stamp(epoch=row["epoch"], generation=row["generation"] or 0)


def lease_of(row: Row) -> Lease | None:
    if row["owner"] is None or row["expires"] is None:
        return None
    return Lease(owner=row["owner"], expires=row["expires"].to_native())


def hold(namespace: str, owner: str, ttl_s: int) -> TxWork[None]:
    """Take or renew `owner`'s lease inside a transaction; NamespaceBusy (rolling it back) if
    another live writer holds it."""
    [row] = yield Stmt(Q.ACQUIRE_LEASE, {"namespace": namespace, "owner": owner, "ttl_s": ttl_s})
    if not row["acquired"]:
        raise busy(namespace, Lease(owner=row["owner"], expires=row["expires"].to_native()))


def renew(namespace: str, owner: str, ttl_s: int) -> TxWork[None]:
    """Renew `owner`'s lease inside a transaction, only while it still holds it; NamespaceBusy
    (rolling the transaction back) when another writer took it over or released it since."""
    rows = yield Stmt(Q.RENEW_LEASE, {"namespace": namespace, "owner": owner, "ttl_s": ttl_s})
    if rows and rows[0]["renewed"]:
        return
    holder = rows[0]["owner"] if rows else None
    raise NamespaceBusy(
        f"writer {owner} lost namespace {namespace!r}: its lease expired and "
        + (f"writer {holder} holds it now" if holder else "another writer took it and let it go")
        + "; that writer may have resumed, discarded or finished this request. Nothing was "
        "written; start the request again",
        owner=holder,
        expires=rows[0]["expires"].to_native() if rows and rows[0]["expires"] else None,
    )


def busy(namespace: str, lease: Lease) -> NamespaceBusy:
    return NamespaceBusy(
        f"namespace {namespace!r} is busy: writer {lease.owner} holds its lease until "
        f"{lease.expires:%Y-%m-%d %H:%M:%S} UTC. One request runs at a time in a namespace; "
        "wait for that request to end (or, if that process died, for its lease to expire)",
        owner=lease.owner,
        expires=lease.expires,
    )


def check_ttl(ttl_s: object) -> int:
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, int) or not 1 <= ttl_s <= MAX_LEASE_S:
        raise ValidationFailed(f"a lease lasts 1 to {MAX_LEASE_S} seconds, not {ttl_s!r}")
    return ttl_s
