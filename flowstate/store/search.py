"""Full-text search over one namespace's states (their summaries and contents).

The user's text never reaches Lucene as syntax: it is reduced to its words (letters and
digits, lowercased, stopwords dropped: `flowstate.engine.relevance.words`), and the query is
built from those words alone, each a plain term, with the namespace as a quoted phrase on the
indexed `namespace` property. The Cypher's `WHERE s.namespace = $namespace` is what enforces
the namespace; the phrase only keeps other namespaces' hits from filling the scan.

    >>> lucene_query("t1", ["hotel", "lisbon"])
    '+namespace:"t1" +(summary:(hotel lisbon) content:(hotel lisbon))'
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from flowstate.errors import ValidationFailed
from flowstate.models import Category
from flowstate.store.catalog import Q
from flowstate.store.plans import Plan, Read

MAX_SEARCH_WORDS = 16  # the rarest words of a long text are enough to find its states
MAX_SEARCH_HITS = 50
_SCAN_FACTOR = 4  # index hits read per row returned, for those of other namespaces
# Letters and digits of any script: none of them is Lucene syntax (+ - ! ( ) : ^ [ ] " { } ~ *
# ? | & / \\ are all non-word characters), and lowercase words are never operators (AND, OR).
_WORD = re.compile(r"[^\W_]+")


class SearchHit(BaseModel):
    """A state that matches a search, as the index would list it, with Lucene's score."""

    model_config = ConfigDict(frozen=True)

    id: str
    request_id: str
    category: Category
    summary: str
    superseded_by: str | None = None
    score: float


def lucene_query(namespace: str, words: Sequence[str]) -> str:
    """The Lucene query for `words` in `namespace`; refuses anything but plain words."""
    terms = list(dict.fromkeys(words))[:MAX_SEARCH_WORDS]
    bad = [w for w in terms if not _WORD.fullmatch(w) or w != w.lower()]
    if bad or not terms:
        raise ValidationFailed("a search needs plain lowercase words (letters and digits)")
    joined = " ".join(terms)
    # The namespace pattern allows letters, digits, '_', '.' and '-': nothing to escape in a
    # quoted phrase (only '"' and '\' would need it).
    return f'+namespace:"{namespace}" +(summary:({joined}) content:({joined}))'


def search(namespace: str, words: Sequence[str], limit: int) -> Plan[list[SearchHit]]:
    """The states of `namespace` matching any of `words`, best first (at most `limit`)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_HITS:
        raise ValidationFailed(f"a search returns 1 to {MAX_SEARCH_HITS} hits, not {limit!r}")
    params = {
        "namespace": namespace,
        "query": lucene_query(namespace, words),
        "scan": limit * _SCAN_FACTOR,
        "limit": limit,
    }
    rows = yield Read(Q.SEARCH_STATES, params)
    return [SearchHit.model_validate(row) for row in rows]
