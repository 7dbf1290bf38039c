"""A namespace out to JSON Lines and back in, as plans over its `Ops` (the format itself is
`flowstate.store.export`, pure).

    lines = list(repo.export_jsonl())
    copy.import_jsonl(lines)        # into an empty namespace, in one transaction
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from flowstate.errors import ValidationFailed
from flowstate.models import RequestBundle
from flowstate.models.wording import counted
from flowstate.store import export
from flowstate.store.catalog import Q
from flowstate.store.commit import write_bundle
from flowstate.store.ops import Ops
from flowstate.store.plans import Changes, Plan, Transaction, TxWork
from flowstate.store.reading import GraphCounts, bundles


def export_jsonl(ops: Ops) -> Plan[Iterator[str]]:
    """The namespace as JSON Lines (see `flowstate.store.export`), newline-terminated."""
    return export.bundle_lines((yield from bundles(ops)))


def import_jsonl(ops: Ops, lines: Iterable[str]) -> Plan[GraphCounts]:
    """Load an export into this (empty) namespace in one transaction; returns what was created.

    Every line is validated first; a bad one raises ValidationFailed naming its number.
    """
    ops.writable("import")
    parsed = export.parse_lines(lines, ops.namespace)
    if not parsed:
        return GraphCounts(nodes=0, relationships=0)  # nothing to write, not even a counter
    created: GraphCounts = yield Transaction(lambda: _import(ops, parsed))
    return created


def _import(ops: Ops, parsed: list[RequestBundle]) -> TxWork[GraphCounts]:
    [row] = yield ops.stmt(Q.COUNT_NAMESPACE)
    if row["nodes"]:
        raise ValidationFailed(
            f"namespace {ops.namespace!r} is not empty ({counted(row['nodes'], 'node')}); "
            "import into a new namespace"
        )
    [stamp] = yield ops.stmt(Q.NAMESPACE_STAMP)
    handed_out = stamp["last_seq"] or 0
    if min(b.request.seq for b in parsed) <= handed_out:
        raise ValidationFailed(
            f"namespace {ops.namespace!r} has handed out request ids up to r{handed_out} "
            "before (ids are never reused); import into a new namespace"
        )
    yield ops.stmt(Q.TOUCH_NAMESPACE)  # live agents reload; the counter node is not memory
    created = Changes()
    for bundle in parsed:
        created += yield from write_bundle(ops.namespace, bundle)
    return GraphCounts(nodes=created.nodes_created, relationships=created.relationships_created)
