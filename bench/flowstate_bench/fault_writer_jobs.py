"""What one request of the many-writer fault run does, whichever shell runs it.

Every request adds a state `mark` whose content is a token unique to (writer, request). Every
fourth one also lowers the hotel budget: it supersedes the budget state it believes current,
so that requests of different writers supersede the same state at once (the second commit is
refused and names the newer state: the request supersedes that one instead). Every fourth
other one pays the hotel: a consequential call citing the budget it opened, raced by those
supersessions; the namespace's commit counter is read just before and just after the guard
decides, so that the decision can be judged afterwards on what was committed by then.

The writer's view of "current" is what a model would have: the index lines it was shown
(unsuperseded budget lines), what refusals named, and its own last commit.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from flowstate.settings import Neo4jSettings
from flowstate.store import Repository

TOKEN = re.compile(r"token=(\d+-\d+)")
_BUDGET_ID = re.compile(r"\br(\d+)\.budget\b")
# "r1.budget ... superseded by r3.budget" on one line, with no other budget id between: index
# marks, refusals of a step or a commit, the guard's reason.
_PAIR = re.compile(
    r"\b(r\d+\.budget)(?:(?!r\d+\.budget)[^\n])*?(?:SUPERSEDED|superseded) by (r\d+\.budget)"
)
SEED_BUDGET = "r1.budget"
ATTEMPTS = 30  # revisions of one request before the writer gives up on it (a finding)
Emit = Callable[[dict[str, Any]], None]


def job_of(n: int) -> str:
    """`lower` the budget, `pay` citing it, or only a `note`."""
    return "lower" if n % 4 == 0 else "pay" if n % 4 == 2 else "note"


def request_text(writer: int, n: int) -> str:
    job = job_of(n)
    what = {
        "lower": "lower the hotel budget",
        "pay": "pay the hotel",
        "note": "note it",
    }[job]
    return f"Please {what}: token={writer}-{n} job={job}"


def token_of(text: str) -> str:
    found = TOKEN.search(text)
    return found.group(1) if found else "none"


def mark(token: str) -> dict[str, Any]:
    return {"op": "add", "key": "mark", "category": "environment",
            "summary": f"mark of token={token}", "content": f"token={token}"}  # fmt: skip


def lowered(token: str, target: str) -> dict[str, Any]:
    return {"op": "add", "key": "budget", "category": "constraint",
            "summary": f"Hotel budget lowered by token={token}",
            "content": f"lowered by token={token}",
            "relations": [{"type": "SUPERSEDES", "target": target}]}  # fmt: skip


def _seq(state_id: str) -> int:
    found = _BUDGET_ID.match(state_id)
    return int(found.group(1)) if found else 0


@dataclass
class Belief:
    """Which budget state a writer takes to be current, from what it was shown: budget ids it
    saw, less those it saw superseded; the newest of the rest. A wrong guess is refused with
    the newer state's id, which the next guess takes in."""

    current: str = SEED_BUDGET
    seen: set[str] = field(default_factory=lambda: {SEED_BUDGET})
    stale: set[str] = field(default_factory=set)

    def learn(self, text: str, own_request: str = "") -> str:
        """Take in an index, a prompt or a refusal (`own_request`'s states are not past
        states); the budget now believed current."""
        for old, new in _PAIR.findall(text):
            self.stale.add(old)
            self.seen.add(new)
        self.seen |= {m.group(0) for m in _BUDGET_ID.finditer(text)}
        mine = f"{own_request}.budget"
        candidates = [s for s in self.seen if s not in self.stale and s != mine]
        if candidates:
            self.current = max(candidates, key=_seq)
        return self.current


def newer_than(text: str) -> str | None:
    """The state a refusal says superseded one this request relied on."""
    named = _PAIR.findall(text)
    return named[-1][1] if named else None


@dataclass(frozen=True)
class WriterJob:
    """Requests `first`..`last` of writer `writer`, through the shell `kind`."""

    settings: Neo4jSettings
    namespace: str
    writer: int
    kind: str
    first: int
    last: int
    pause_s: float = 0.02

    def event(self, name: str, n: int, **more: Any) -> dict[str, Any]:
        return {"event": name, "writer": self.writer, "kind": self.kind, "n": n, **more}


class GaveUp(Exception):
    """A request still refused after ATTEMPTS revisions."""


def failed_event(job: WriterJob, n: int, e: BaseException) -> dict[str, Any]:
    """A request that raised instead of answering, as an event."""
    return job.event("failed", n, error=f"{type(e).__name__}: {e}"[:600], type=type(e).__name__)


def commit_counter(repo: Repository) -> Callable[[], int]:
    """The namespace's commit counter, read when called."""
    return lambda: repo.stamp().committed


async def index_settled(
    counter: Callable[[], int],
    followed: Callable[[], Awaitable[str]],
    rebuilt: Callable[[], Awaitable[str]],
    wait_s: float = 180.0,
) -> bool | None:
    """Whether the index a writer followed equals one rebuilt from scratch, compared while no
    commit lands between the two reads (other writers may still be committing); None when
    the namespace never stood still for that long."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        before = counter()
        ours, fresh = await followed(), await rebuilt()
        if counter() == before:
            return ours == fresh
        await asyncio.sleep(0.2)
    return None
