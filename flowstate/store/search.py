"""Full-text search over one namespace's states (their summaries and contents).

The user's text never reaches Lucene as syntax: it is reduced to its words (letters and
digits, lowercased, stopwords dropped: `flowstate.engine.relevance.words`), and the query is
built from those words alone, each a plain term, required together with the namespace's term.

The namespace is matched inside the index on `namespace_term`, a property every state carries
(set by the commit, backfilled by `flowstate.store.upgrade`): the namespace in base 32, one
lowercase run of letters and digits, so the index's analyzer keeps it as one token. Matching
the namespace's own text would not do: the analyzer splits `user42-archive` into `user42` and
`archive`, so a phrase for `user42` matched the neighbour's states too, and the neighbour's
stronger hits could fill the hits Lucene returns before the Cypher threw them away. Base 32 is
one-to-one, so no other namespace has the same term, and the term is 207 characters at most,
under the analyzer's 255-character token limit. The Cypher's `WHERE s.namespace = $namespace`
still enforces the namespace; the term keeps every other namespace out of Lucene's hits.

    >>> namespace_term("t1")
    'nsoqyq'
    >>> lucene_query("t1", ["hotel", "lisbon"])
    '+namespace_term:nsoqyq +(summary:(hotel lisbon) content:(hotel lisbon))'
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from flowstate.errors import ValidationFailed
from flowstate.models import Category, IndexRequest
from flowstate.models.ids import check_namespace
from flowstate.models.views import INLINE_CONTENT_CHARS, RemovedHow
from flowstate.store.catalog import Q
from flowstate.store.plans import Plan, Read

MAX_SEARCH_WORDS = 16  # the rarest words of a long text are enough to find its states
MAX_SEARCH_HITS = 50
# The index's look for old requests matching a request: the full-text hits it reads, and the
# last commits it reads from the graph because the full-text index may not hold them yet.
CANDIDATE_SCAN = 64
RECENT_COMMITS = 8
# Letters and digits of any script: none of them is Lucene syntax (+ - ! ( ) : ^ [ ] " { } ~ *
# ? | & / \\ are all non-word characters), and lowercase words are never operators (AND, OR).
_WORD = re.compile(r"[^\W_]+")
# The prefix keeps the term a word that starts with a letter, whatever the namespace.
_TERM_PREFIX = "ns"


class SearchHit(BaseModel):
    """A state that matches a search, as the index would list it, with Lucene's score."""

    model_config = ConfigDict(frozen=True)

    id: str
    request_id: str
    category: Category
    summary: str
    superseded_by: str | None = None
    # How `superseded_by` was removed since (it stays superseded by it).
    superseder_removed: RemovedHow | None = None
    score: float


def namespace_term(namespace: str) -> str:
    """The namespace as one full-text token: `ns` and its UTF-8 bytes in base 32, lowercase,
    without padding (one-to-one, so it names this namespace and no other)."""
    encoded = base64.b32encode(check_namespace(namespace).encode("utf-8")).decode("ascii")
    return _TERM_PREFIX + encoded.rstrip("=").lower()


def query_words(words: Sequence[str]) -> str:
    """`words` (at most MAX_SEARCH_WORDS) joined for a Lucene clause; refuses anything but
    plain lowercase words."""
    terms = list(dict.fromkeys(words))[:MAX_SEARCH_WORDS]
    bad = [w for w in terms if not _WORD.fullmatch(w) or w != w.lower()]
    if bad or not terms:
        raise ValidationFailed("a search needs plain lowercase words (letters and digits)")
    return " ".join(terms)


def lucene_query(namespace: str, words: Sequence[str]) -> str:
    """The Lucene query for `words` in `namespace`; refuses anything but plain words."""
    joined = query_words(words)
    term = namespace_term(namespace)
    return f"+namespace_term:{term} +(summary:({joined}) content:({joined}))"


def search(namespace: str, words: Sequence[str], limit: int) -> Plan[list[SearchHit]]:
    """The states of `namespace` matching any of `words`, best first (at most `limit`)."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_HITS:
        raise ValidationFailed(f"a search returns 1 to {MAX_SEARCH_HITS} hits, not {limit!r}")
    params = {
        "namespace": namespace,
        "query": lucene_query(namespace, words),
        "limit": limit,
    }
    rows = yield Read(Q.SEARCH_STATES, params)
    return [SearchHit.model_validate(row) for row in rows]


def candidates(
    namespace: str, words: Sequence[str], limit: int, *, below: int, upto: int
) -> Plan[list[IndexRequest]]:
    """Up to `limit` requests below seq `below` whose states match `words` best, and those of
    the last RECENT_COMMITS commits, each committed by commit number `upto`, with their state
    lines, in seq order: one statement, without waiting for the full-text index
    (`index_candidates.cypher` says why)."""
    params = {
        "namespace": namespace,
        "query": lucene_query(namespace, words),
        "scan": CANDIDATE_SCAN,
        "limit": limit,
        "below": below,
        "upto": upto,
        "recent": RECENT_COMMITS,
        "inline_chars": INLINE_CONTENT_CHARS,
    }
    rows = yield Read(Q.INDEX_CANDIDATES, params)
    return [IndexRequest.model_validate(row) for row in rows]
