"""What one step did, as data: the report a shell reads instead of the prompt's text.

The driver hands a `StepReport` out with every `Progress`: the states the delta touched (or
why nothing was applied), what was opened, the guard's decision, the observation recorded,
and every rejection with its kind. The model reads the same rejections as text at its next
step (`messages`, bounded: a rejection may quote hostile input).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from flowstate.engine.tools import bounded
from flowstate.models.records import ActionDecision
from flowstate.models.wording import counted

MAX_TOLD_CHARS = 1_000  # per message
MAX_TOLD_PER_STEP = 20  # messages per step; the rest are counted in one more line


class RejectionKind(StrEnum):
    MALFORMED = "malformed"  # the reply could not be read
    DELTA = "delta"  # the ISU rules refused the delta: nothing of it was applied
    ACCESS = "access"  # the PSA rules refused an id
    TOOL = "tool"  # an unknown tool
    GUARD = "guard"  # a consequential call refused by the guard or the approver
    ANSWER_HELD = "answer_held"  # a final answer held back because its delta was refused
    MISSING = "missing"  # an id forgotten by another process since it was shown
    INTERRUPTED = "interrupted"  # a call cut by a crash: whether it ran is unknown
    STALE = "stale"  # a state the request opened or relates to was superseded by another request
    CONFLICT = "conflict"  # the commit was refused: another request superseded the same state


@dataclass(frozen=True)
class Rejection:
    kind: RejectionKind
    message: str


@dataclass
class StepReport:
    """One step's outcome. `delta_applied` is None for a step without a delta."""

    step: int
    rejections: list[Rejection] = field(default_factory=list)
    delta_applied: bool | None = None
    touched: list[str] = field(default_factory=list)  # state ids added, updated or removed
    opened: list[str] = field(default_factory=list)  # ids revealed or listed for the next call
    decision: ActionDecision | None = None  # a consequential call's recorded decision
    observation: str | None = None  # the id of the tool result recorded
    done: bool = False  # the request ended (and was committed) with this step

    def of_kind(self, kind: RejectionKind) -> list[str]:
        return [r.message for r in self.rejections if r.kind is kind]

    @property
    def messages(self) -> list[str]:
        return told_back(self.rejections)


def shortened(message: str) -> str:
    """A message of at most about MAX_TOLD_CHARS: a long one loses its middle (where quoted
    input sits), so the start (where) and the end (why) are kept."""
    if len(message) <= MAX_TOLD_CHARS:
        return bounded(message)
    head, tail = message[: MAX_TOLD_CHARS * 3 // 5], message[-(MAX_TOLD_CHARS // 3) :]
    cut = len(message) - len(head) - len(tail)
    return bounded(f"{head}… [{cut:,} characters cut] …{tail}")


def told_back(told: list[Rejection]) -> list[str]:
    """The messages for the next prompt: each bounded, at most MAX_TOLD_PER_STEP of them."""
    kept = [shortened(t.message) for t in told[:MAX_TOLD_PER_STEP]]
    if len(told) > MAX_TOLD_PER_STEP:
        more = counted(len(told) - MAX_TOLD_PER_STEP, "more problem")
        kept.append(f"... and {more} in this step")
    return kept
