"""Lexical relevance of past states to a request: BM25 over their keys and summaries.

No model call and no embedding: the words of the request against the words of each state's
id key and summary (what the index shows). Words that every state carries weigh nothing; a
state naming the request's rare words ranks first.

>>> docs = {"r1.deploy_window_billing_api": "deploy window for billing-api",
...         "r1.owner_auth_gateway": "on-call owner for auth-gateway"}
>>> rank("remind me of the deploy window for billing-api", docs)[0][0]
'r1.deploy_window_billing_api'
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping

_WORD = re.compile(r"[^\W_]+")
# Words too common to tell states apart in any request.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "that",
        "the",
        "their",
        "them",
        "this",
        "to",
        "us",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "you",
        "your",
    ]
)
K1, B = 1.2, 0.75


def words(text: str) -> list[str]:
    """Lowercase words of `text` without stopwords (`deploy_window` gives two words)."""
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def rank(query: str, docs: Mapping[str, str]) -> list[tuple[str, float]]:
    """`docs` (id -> text) scored against `query` by BM25, best first; only scores > 0."""
    return rank_words(query, {doc_id: words(text) for doc_id, text in docs.items()})


def rank_words(query: str, tokens: Mapping[str, list[str]]) -> list[tuple[str, float]]:
    """`rank` over documents already split into `words`."""
    wanted = set(words(query))
    if not wanted or not tokens:
        return []
    n = len(tokens)
    mean_len = sum(len(t) for t in tokens.values()) / n or 1.0
    frequency = Counter(w for t in tokens.values() for w in set(t) if w in wanted)
    idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in frequency.items()}
    scored = []
    for doc_id, toks in tokens.items():
        counts = Counter(t for t in toks if t in idf)
        norm = K1 * (1 - B + B * len(toks) / mean_len)
        score = sum(idf[w] * c * (K1 + 1) / (c + norm) for w, c in counts.items())
        if score > 0:
            scored.append((doc_id, score))
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))


_CLAUSE = re.compile(r"[.;,?!\n]+|\band\b|\bthen\b", re.IGNORECASE)


def rank_clauses(query: str, docs: Mapping[str, str]) -> list[str]:
    """Doc ids matching `query`, the best match of each of its clauses first (a request that
    asks for two things gets the best of each before the second best of either), then the
    rest by their score against the whole query.

    >>> docs = {"a": "owner of billing", "b": "flag of billing", "c": "flag of auth"}
    >>> rank_clauses("the owner of billing and the flag of auth", docs)[:2]
    ['a', 'c']
    """
    tokens = {doc_id: words(text) for doc_id, text in docs.items()}
    bests = [r[0] for r in (rank_words(c, tokens) for c in _CLAUSE.split(query)) if r]
    # A clause whose best match is weak (the request's chatter) does not get a place first.
    floor = max((score for _, score in bests), default=0.0) * 0.5
    out = dict.fromkeys(doc_id for doc_id, score in bests if score >= floor)
    for doc_id, _ in rank_words(query, tokens):
        out.setdefault(doc_id)
    return list(out)


def state_text(state_id: str, summary: str) -> str:
    """What a state is matched on: the key part of its id and its summary."""
    return f"{state_id.partition('.')[2]} {summary}"
