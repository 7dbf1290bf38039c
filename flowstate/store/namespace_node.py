"""The namespace's counter node: ids handed out, commits counted, the generation.

One `(:Namespace {namespace})` node per namespace holds
- `last_seq`: the highest request seq ever handed out. Forgetting a request (even the newest)
  or expiring its states never lowers it, so an id like `r7` names one request for good.
- `epoch` and `generation`: a stamp that changes whenever something of the namespace is
  deleted (forget, retention) or imported. A live agent compares it at each request start with
  the stamp its cached index was built at, and rebuilds the index when it differs; commits are
  picked up incrementally by seq and need no stamp.
- `committed`: how many commits there were; each commit takes the node's write lock, so commits
  of a namespace are serialised. Agents follow it to append what others committed.
- `forgetting` and `forgetting_until`: the fence of a `forget --all` under way (its writer,
  and when the fence lapses unless the forget renews it, on the server's clock). While it
  holds, no request begins there, opens its draft or is taken over (`NamespaceBusy`).
Who runs which open request is on its draft (`flowstate.store.holds`).

Only `flowstate forget --all` (the whole namespace) deletes the node, last; ids then start at
r1. Every begin write-locks the node, and so does the fence, so a request either began before
the fence (and the forget is refused while it runs) or meets it: no request works on an id
that the new counter hands out again.
"""

from __future__ import annotations

import os
import socket
import uuid

from pydantic import BaseModel, ConfigDict

from flowstate.errors import NamespaceBusy, ValidationFailed
from flowstate.store.catalog import Q
from flowstate.store.holds import _native
from flowstate.store.plans import Plan, Read, Row

MAX_HOLD_S = 86_400


class Stamp(BaseModel):
    """What a cached index was built at: a different epoch or generation means something was
    deleted (rebuild); a higher `committed`, that requests were committed since (append)."""

    model_config = ConfigDict(frozen=True)

    epoch: str | None = None
    generation: int = 0
    committed: int = 0

    def same_content(self, other: Stamp | None) -> bool:
        """Nothing was deleted or imported between the two (commits aside)."""
        return other is not None and (self.epoch, self.generation) == (
            other.epoch,
            other.generation,
        )


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
    held: int = 0  # open requests a live writer holds now


def list_namespaces() -> Plan[list[NamespaceSummary]]:
    """Every namespace of the database that holds anything, with its counts, in name order."""
    rows = yield Read(Q.NAMESPACES, {})
    return [NamespaceSummary.model_validate(row) for row in rows]


def writer_id() -> str:
    """A name for this writer that says where it runs: host, process id and a random tag."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def stamp_of(row: Row) -> Stamp:
    return Stamp(
        epoch=row["epoch"], generation=row["generation"] or 0, committed=row["committed"] or 0
    )


def check_ttl(ttl_s: object) -> int:
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, int) or not 1 <= ttl_s <= MAX_HOLD_S:
        raise ValidationFailed(f"a hold lasts 1 to {MAX_HOLD_S} seconds, not {ttl_s!r}")
    return ttl_s


def being_forgotten(namespace: str, row: Row, action: str) -> NamespaceBusy:
    """The refusal of a begin (or a take-over) that met the fence of a `forget --all`: `row`
    holds the fence's `forgetting` writer and `until`."""
    until = _native(row["until"])
    when = f" (its fence lapses at {until:%Y-%m-%d %H:%M:%S} UTC unless renewed)" if until else ""
    return NamespaceBusy(
        f"cannot {action} in namespace {namespace!r}: writer {row['forgetting']} is forgetting "
        f"the whole namespace{when}. Nothing was written; begin again once it has ended (ids "
        "then start again at r1)",
        owner=row["forgetting"],
        expires=until,
    )


def reset_meanwhile(namespace: str, request_id: str) -> NamespaceBusy:
    """The refusal of a first draft save whose id was handed out by a counter that a
    `forget --all` has deleted since (the new counter hands the id out again)."""
    return NamespaceBusy(
        f"cannot open {request_id} in namespace {namespace!r}: the whole namespace was "
        "forgotten after the id was handed out, so the id will be handed out again. Nothing "
        "was written; begin the request again"
    )
