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
# A revealed state's head; its category and summary are left off while its index line shows.
_REVEALED = re.compile(r"^- (r\d+\.[a-z][a-z0-9_]*)(?: \[\w+\] (.*))?$", re.M)
_RELATIONS = re.compile(r"^  relations: (.*)$", re.M)
_END = re.compile(r"(?:->|<-) (r\d+(?:\.[a-z0-9_]+|\.o\d+)?)")
_OPENED = re.compile(r"^(r\d+):$", re.M)
# The index section (to the next top-level header) and the Active State's opened requests.
_LISTINGS = re.compile(
    r"^# Historical State Index\n.*?(?=^# |\Z)|^## Opened requests\n.*?(?=^#|\Z)", re.M | re.S
)


def _listing(text: str) -> str:
    """Where the engine lists openable ids as lines: the index and the opened requests.
    Elsewhere (a revealed state's content, a tool's output) a line that looks like an index
    line is text someone wrote, not a listing; without those headers, all of `text`."""
    parts = [m.group(0) for m in _LISTINGS.finditer(text)]
    return "\n".join(parts) if parts else text


def shown(text: str) -> dict[str, str]:
    """What the prompt lets the reader open, id -> the text it is matched on."""
    found: dict[str, str] = {}
    listing = _listing(text)
    for rid, summary in _COLLAPSED.findall(listing):
        found[rid] = summary
    lines = dict(_STATE_LINE.findall(listing))
    for sid, summary in lines.items():
        found[sid] = state_text(sid, summary)
    # A relation's far end shows no text of its own: it is matched on the revealed state it
    # hangs off.
    blocks = re.split(r"^(?=- r\d+\.)", text, flags=re.M)
    for block in blocks:
        head = _REVEALED.match(block)
        rel = _RELATIONS.search(block)
        if head and rel:
            for end in _END.findall(rel.group(1)):
                said = head.group(2) or lines.get(head.group(1), "")
                found.setdefault(end, state_text(head.group(1), said))
    return found


def listed(text: str) -> set[str]:
    """The state ids `text` lists as index lines."""
    return {sid for sid, _ in _STATE_LINE.findall(_listing(text))}


def inline(text: str) -> set[str]:
    """The state ids whose index lines in `text` show their content."""
    return {sid for sid, line in _STATE_LINE.findall(_listing(text)) if " content: " in line}


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


class Opener:
    """The reader's choices over one request's steps, for agents that open memory in the
    benchmark harnesses: at its first access step the K shown ids that best match the
    request; at a later one only what the first made visible (a collapsed request's states,
    relation ends) if any of it matches; after `rounds` access steps, nothing more.

    >>> text = "r2: Ticket 2\\n  r2.window_billing [environment] deploy window for billing\\n"
    >>> o = Opener(k=1)
    >>> o.pick(text, "the deploy window of billing"), o.pick(text, "billing")
    (['r2.window_billing'], [])
    """

    def __init__(self, k: int = DEFAULT_K, rounds: int = 2) -> None:
        self.k, self.rounds = k, rounds
        self.reset()

    def reset(self) -> None:
        self.steps = 0
        self.asked: set[str] = set()
        self.first_seen: set[str] = set()

    def pick(self, text: str, request: str) -> list[str]:
        self.steps += 1
        if self.steps > self.rounds:
            return []
        picks = choose(text, request, self.k, skip=self.asked)
        if self.steps == 1:
            self.first_seen = set(shown(text))
        else:
            picks = [p for p in picks if p not in self.first_seen]
        self.asked.update(picks)
        return picks
