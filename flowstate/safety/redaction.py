"""Redaction: a hook that sees every record before it is persisted and may mask it.

A redactor is any callable from a record to a record of the same type. `PatternRedactor`
masks text fields with regular expressions; `builtin_redactor()` masks payment card numbers
(Luhn-checked, so order numbers survive) and e-mail addresses.

>>> redact = builtin_redactor()
>>> redact.text("Card 4111 1111 1111 1111, mail ana@example.org, order 1234 5678 9012 3456")
'Card [card ****1111], mail [email], order 1234 5678 9012 3456'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flowstate.models.active import ActiveState
from flowstate.models.records import (
    ActionDecision,
    Observation,
    Outcome,
    Request,
    RequestBundle,
    StateNode,
)

R = TypeVar("R", StateNode, Observation, Request, ActionDecision)
Redactor = Callable[[R], R]

# The text fields of each record that may carry what a person said or a tool returned.
TEXT_FIELDS: dict[type, tuple[str, ...]] = {
    StateNode: ("summary", "content"),
    Observation: ("arguments", "output"),
    Request: ("text", "summary", "answer"),
    ActionDecision: ("arguments", "reason"),
}

# A run of digits with the separators people type between groups (spaces, no-break spaces,
# dashes, dots, slashes, underscores); card numbers are found inside it at group boundaries.
_DIGIT_RUN = re.compile(r"(?<!\d)\d(?:[ \u00a0\-./_]{0,2}\d)+(?!\d)")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")


def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def mask_cards(text: str) -> str:
    """Each Luhn-valid run of 13 to 19 digits that starts and ends at a group boundary of a
    digit run is masked: `ref-4111 1111 1111 1111-01` keeps `ref-` and `-01`."""
    return _DIGIT_RUN.sub(lambda m: _mask_run(m.group()), text)


def _mask_run(run: str) -> str:
    digits = [i for i, ch in enumerate(run) if ch.isdigit()]
    starts = {0} | {k for k in range(1, len(digits)) if digits[k] != digits[k - 1] + 1}
    ends = {k - 1 for k in starts if k} | {len(digits) - 1}
    out, k, done = [], 0, 0
    while k < len(digits):
        found = None
        if k in starts:
            for length in range(min(19, len(digits) - k), 12, -1):
                last = k + length - 1
                number = "".join(run[digits[j]] for j in range(k, last + 1))
                if last in ends and luhn_valid(number):
                    found = last
                    break
        if found is None:
            k += 1
            continue
        out.append(run[done : digits[k]])
        out.append(f"[card ****{''.join(run[digits[j]] for j in range(found - 3, found + 1))}]")
        done, k = digits[found] + 1, found + 1
    out.append(run[done:])
    return "".join(out)


def mask_emails(text: str) -> str:
    return _EMAIL.sub("[email]", text)


@dataclass(frozen=True)
class PatternRedactor:
    """Applies text maskers to every text field of a record."""

    maskers: tuple[Callable[[str], str], ...] = field(default=(mask_cards, mask_emails))

    def text(self, value: str) -> str:
        for masker in self.maskers:
            value = masker(value)
        return value

    def __call__(self, record: R) -> R:
        changes = {}
        for name in TEXT_FIELDS.get(type(record), ()):
            before = getattr(record, name)
            after = self.text(before)
            if after != before:
                changes[name] = after
        # Re-validate: a masker must not produce a record that breaks the models' limits.
        return type(record).model_validate(record.model_dump() | changes) if changes else record


def builtin_redactor() -> PatternRedactor:
    """Masks payment card numbers and e-mail addresses."""
    return PatternRedactor()


def redact_bundle(bundle: RequestBundle, redact: Redactor) -> RequestBundle:
    """The bundle as it may be persisted: every record passed through the redactor."""
    return bundle.model_copy(
        update={
            "request": redact(bundle.request),
            "states": [redact(s) for s in bundle.states],
            "observations": [redact(o) for o in bundle.observations],
            "decisions": [redact(d) for d in bundle.decisions],
        }
    )


def redact_active(active: ActiveState, redact: Redactor) -> ActiveState:
    """A copy of the Active State for the draft; the live one keeps the model's own view.

    Every text the draft holds passes through the hook: states, observations, decisions,
    revealed records, the parked tool call's arguments, the action log, the rejections told
    to the model (they may quote its input) and how the request ended.
    """
    text = _free_text(redact, active)
    call = active.pending_call
    finish = active.finish
    return active.model_copy(
        update={
            "text": _redact_text(redact, active),
            "states": {k: redact(s) for k, s in active.states.items()},
            "observations": {k: redact(o) for k, o in active.observations.items()},
            "decisions": [redact(d) for d in active.decisions],
            "revealed": {
                k: r.model_copy(update={"state": redact(r.state)})
                for k, r in active.revealed.items()
            },
            "opened_observations": {k: redact(o) for k, o in active.opened_observations.items()},
            "opened_requests": {
                rid: [s.model_copy(update={"summary": text(s.summary)}) for s in states]
                for rid, states in active.opened_requests.items()
            },
            "request_texts": {rid: text(t) for rid, t in active.request_texts.items()},
            "pending_call": call
            and call.model_copy(update={"arguments": _redact_value(text, call.arguments)}),
            "log": [r.model_copy(update={"action": text(r.action)}) for r in active.log],
            "rejections": [text(r) for r in active.rejections],
            "finish": finish
            and finish.model_copy(
                update={
                    "answer": text(finish.answer),
                    "summary": text(finish.summary),
                    "error": finish.error and text(finish.error),
                }
            ),
        }
    )


def _free_text(redact: Redactor, active: ActiveState) -> Callable[[str], str]:
    """Redacts a string that belongs to no record yet, passed as a Request's `answer` (the one
    unbounded text field), so a record-level hook needs no second entry point."""

    def text(value: str) -> str:
        if not value:
            return value
        probe = Request(
            namespace=active.namespace,
            id=active.request_id,
            seq=active.seq,
            text="",
            summary="draft",
            outcome=Outcome.ANSWERED,
            answer=value,
        )
        return redact(probe).answer

    return text


def _redact_value(text: Callable[[str], str], value: Any) -> Any:
    """Tool arguments with every string (and key) redacted; their depth is bounded at parsing."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {text(k): _redact_value(text, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(text, v) for v in value]
    return value


def _redact_text(redact: Redactor, active: ActiveState) -> str:
    # The request text travels inside the draft before its Request record exists: pass it
    # through the redactor as one, so a record-level hook needs no second entry point.
    probe = Request(
        namespace=active.namespace,
        id=active.request_id,
        seq=active.seq,
        text=active.text,
        summary="draft",
        outcome=Outcome.ANSWERED,
    )
    return redact(probe).text
