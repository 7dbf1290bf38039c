"""Bringing a store written by an older FlowState up to the current schema, at connect.

Each namespace's counter node keeps what it holds (`requests`, `states`), which the index's
start reads instead of counting; `namespace_counts` counts them where a store written before
they existed has none (`backfill_namespace_counts.cypher`).

Search matches a namespace inside the full-text index by `namespace_term` on each state
(`flowstate.store.search`). A store written before that property existed has states without
it and the older index, `flowstate_state_text`, which indexed the namespace's text. The schema
creates the current index; this plan then gives every state without a term its namespace's
term (in batches) and drops the older index. The older index is the marker: while it exists
the upgrade runs (a store cut off halfway upgrades again at the next connect), and once it is
gone, checking costs one catalog lookup. Every step is safe to run twice, so two processes
connecting at once both succeed.
"""

from __future__ import annotations

import logging

from flowstate.errors import ValidationFailed
from flowstate.store.catalog import Q
from flowstate.store.plans import Batched, Plan, Read, Write
from flowstate.store.search import namespace_term

log = logging.getLogger("flowstate")


def search_terms() -> Plan[int]:
    """Backfill `namespace_term` and drop the older full-text index, when the store still has
    it; how many namespaces got their term (0: nothing to do)."""
    [row] = yield Read(Q.LEGACY_SEARCH_INDEX, {})
    if not row["found"]:
        return 0
    rows = yield Read(Q.UNTERMED_NAMESPACES, {})
    terms = {}
    for found in rows:
        try:
            terms[found["namespace"]] = namespace_term(found["namespace"])
        except ValidationFailed:
            continue  # not a name FlowState accepts: none of its verbs reads that namespace
    if terms:
        # Once per store, and it may take minutes on a large one: say what is happening.
        log.warning(
            "upgrading the store: the states of %d namespaces get their search term "
            "(namespace_term), then the index flowstate_state_text is dropped",
            len(terms),
        )
        yield Batched(Q.BACKFILL_NAMESPACE_TERMS, {"terms": terms})
    yield Write(Q.DROP_LEGACY_SEARCH_INDEX, {})
    return len(terms)


def namespace_counts() -> Plan[int]:
    """Count what each namespace holds onto its counter node, where it has no counts yet; how
    many namespaces were counted (0: nothing to do, one read)."""
    [row] = yield Read(Q.UNCOUNTED_NAMESPACES, {})
    uncounted = int(row["uncounted"])
    if uncounted:
        log.warning("upgrading the store: counting what %d namespaces hold", uncounted)
        yield Batched(Q.BACKFILL_NAMESPACE_COUNTS, {})
    return uncounted
