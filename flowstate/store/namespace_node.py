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
Who runs which open request is on its draft (`flowstate.store.holds`).

Only `flowstate forget --all` (the whole namespace) deletes the node; ids then start at r1.
"""

from __future__ import annotations

import os
import socket
import uuid

from pydantic import BaseModel, ConfigDict

from flowstate.errors import ValidationFailed
from flowstate.store.catalog import Q
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
