"""Every Cypher statement FlowState runs, loaded by name from one folder of `.cypher` files.

The folder is `cypher/` at the repository root in a checkout, and `flowstate/_cypher` in an
installed wheel (hatch force-include). Code refers to queries through `Q`, so a typo is an
AttributeError at import time and a test can hold the files and the names in step:

    >>> "MATCH" in query(Q.HISTORY)
    True
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from pathlib import Path

_PACKAGE_ROOT = Path(__file__).resolve().parent.parent


class Q(StrEnum):
    """The name of each query file, without `.cypher`."""

    SCHEMA = "schema"
    AWAIT_INDEXES = "await_indexes"
    SCHEMA_ONLINE = "schema_online"
    PING = "ping"
    NEXT_REQUEST_SEQ = "next_request_seq"
    ALLOCATE_REQUEST_SEQ = "allocate_request_seq"
    TOUCH_NAMESPACE = "touch_namespace"
    NAMESPACE_STAMP = "namespace_stamp"
    OPEN_DRAFT = "open_draft"
    RENEW_HOLD = "renew_hold"
    RELEASE_HOLD = "release_hold"
    TAKE_OVER_DRAFT = "take_over_draft"
    OPEN_REQUESTS = "open_requests"
    INDEX_SINCE = "index_since"
    INDEX_NEWEST = "index_newest"
    INDEX_NEWEST_HEADS = "index_newest_heads"
    INDEX_OLDER = "index_older"
    INDEX_REQUESTS = "index_requests"
    COUNT_OLDER_REQUESTS = "count_older_requests"
    INDEX_CANDIDATES = "index_candidates"
    COMMIT_BUNDLE = "commit_bundle"
    INDEX_GENERATION = "index_generation"
    INDEX_HEADS = "index_heads"
    REVEAL_STATES = "reveal_states"
    EXPAND_IDS = "expand_ids"
    DECISIONS = "decisions"
    PROVENANCE = "provenance"
    HISTORY = "history"
    SAVE_DRAFT = "save_draft"
    SCRUB_DRAFT = "scrub_draft"
    DRAFTS = "drafts"
    EXISTING_IDS = "existing_ids"
    DISCARD_DRAFT = "discard_draft"
    FORGET_REQUEST = "forget_request"
    FORGET_STATE = "forget_state"
    FENCE_NAMESPACE = "fence_namespace"
    FORGET_NAMESPACE_BATCH = "forget_namespace_batch"
    EXPIRE_STATES = "expire_states"
    EXPIRING_STATES = "expiring_states"
    MARK_REMOVED = "mark_removed"
    EXPIRE_OBSERVATIONS = "expire_observations"
    RETENTION_PREVIEW = "retention_preview"
    COUNT_NAMESPACE = "count_namespace"
    NAMESPACES = "namespaces"
    EXPORT_BUNDLES = "export_bundles"
    BEGIN_FACT = "begin_fact"
    SEARCH_STATES = "search_states"
    CURRENT_STATES = "current_states"
    LEGACY_SEARCH_INDEX = "legacy_search_index"
    UNTERMED_NAMESPACES = "untermed_namespaces"
    BACKFILL_NAMESPACE_TERMS = "backfill_namespace_terms"
    DROP_LEGACY_SEARCH_INDEX = "drop_legacy_search_index"
    UNCOUNTED_NAMESPACES = "uncounted_namespaces"
    BACKFILL_NAMESPACE_COUNTS = "backfill_namespace_counts"


def find_cypher_dir(package_root: Path = _PACKAGE_ROOT) -> Path:
    """The query folder: the wheel's `flowstate/_cypher`, else the checkout's `cypher/`."""
    candidates = [package_root / "_cypher", package_root.parent / "cypher"]
    for candidate in candidates:
        if (candidate / f"{Q.SCHEMA}.cypher").is_file():
            return candidate
    raise FileNotFoundError(
        "FlowState's Cypher files are missing; looked in " + ", ".join(map(str, candidates))
    )


@cache
def cypher_dir() -> Path:
    return find_cypher_dir()


def file_names() -> set[str]:
    """Names of the query files in the folder (the Browser extras in subfolders excluded)."""
    return {path.stem for path in cypher_dir().glob("*.cypher")}


def query(name: Q | str) -> str:
    """The text of one query file."""
    return _load(str(name))


@cache
def _load(name: str) -> str:
    path = cypher_dir() / f"{name}.cypher"
    if not path.is_file():
        raise KeyError(f"no query file {path.name} in {cypher_dir()}")
    return path.read_text(encoding="utf-8")


@cache
def statements(name: Q | str) -> tuple[str, ...]:
    """A multi-statement file (the schema) split on `;`, with `//` comment lines dropped.

    Such files must not put `;` or `//` inside string literals; the schema has none.
    """
    lines = [line for line in query(name).splitlines() if not line.lstrip().startswith("//")]
    parts = "\n".join(lines).split(";")
    return tuple(part.strip() for part in parts if part.strip())
