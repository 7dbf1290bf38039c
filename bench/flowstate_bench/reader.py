"""A reader that is not an oracle: what it opens comes only from the prompt text it is shown.

The oracle agents open exactly the states a request needs, so their recall of 1.0 is built
in. The reader instead ranks what a FlowState prompt shows it (the index's state lines, the
collapsed requests' lines, the far ends of revealed relations) by lexical match with the
request, and opens at most K per step; the harness keeps its actions the oracle's, given the
facts it actually opened. What it did not open, it does not have. So its recall measures
whether what the memory shows lets a reader find what it needs, without a model.

>>> text = "# Historical State Index\\nr1: Ticket 1  [2 states; collapsed: access r1]\\n"
>>> text += "r2: Ticket 2\\n  r2.window_billing [environment] deploy window for billing\\n"
>>> choose(text, "the deploy window of billing", 2)
['r2.window_billing']
"""

from __future__ import annotations

import re

from flowstate.engine.relevance import rank_clauses, state_text

DEFAULT_K = 3  # ids the reader opens per step

_STATE_LINE = re.compile(
    r"^  (r\d+\.[a-z][a-z0-9_]*) \[\w+\] (.*?)(?:  \(SUPERSEDED by \S+\))?$", re.M
)
_COLLAPSED = re.compile(r"^(r\d+): (.*?)  \[\d+ states?; collapsed: access \1\]$", re.M)
_REVEALED = re.compile(r"^- (r\d+\.[a-z][a-z0-9_]*) \[\w+\] (.*)$", re.M)
_RELATIONS = re.compile(r"^  relations: (.*)$", re.M)
_END = re.compile(r"(?:->|<-) (r\d+(?:\.[a-z0-9_]+|\.o\d+)?)")
_OPENED = re.compile(r"^(r\d+):$", re.M)


def shown(text: str) -> dict[str, str]:
    """What the prompt lets the reader open, id -> the text it is matched on."""
    found: dict[str, str] = {}
    for rid, summary in _COLLAPSED.findall(text):
        found[rid] = summary
    for sid, summary in _STATE_LINE.findall(text):
        found[sid] = state_text(sid, summary)
    # A relation's far end shows no text of its own: it is matched on the revealed state it
    # hangs off.
    blocks = re.split(r"^(?=- r\d+\.)", text, flags=re.M)
    for block in blocks:
        head = _REVEALED.match(block)
        rel = _RELATIONS.search(block)
        if head and rel:
            for end in _END.findall(rel.group(1)):
                found.setdefault(end, state_text(head.group(1), head.group(2)))
    return found


def listed(text: str) -> set[str]:
    """The state ids `text` lists as index lines."""
    return {sid for sid, _ in _STATE_LINE.findall(text)}


def opened(text: str) -> set[str]:
    """What the prompt shows as already open: revealed states and opened requests."""
    return {sid for sid, _ in _REVEALED.findall(text)} | set(_OPENED.findall(text))


def choose(text: str, request: str, k: int = DEFAULT_K, skip: set[str] | None = None) -> list[str]:
    """At most `k` ids to open next: those shown and not yet open (nor in `skip`), ranked by
    lexical match with `request` (the best of each of its clauses first); only ids that match
    at all."""
    done = opened(text) | (skip or set())
    candidates = {i: t for i, t in shown(text).items() if i not in done}
    return rank_clauses(request, candidates)[:k]
