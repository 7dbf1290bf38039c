"""A whole request in one transaction: begin, record and commit a few facts in one call.

    result = fs.remember([{"op": "add", "key": "home_city", "category": "preference",
                           "summary": "Lives in Porto", "content": "Lives in Porto"}],
                         text="I live in Porto now")

The step goes through the same step driver and rules as every request (a delta and a final
answer in one step; a refused delta holds the answer back, so nothing is committed), and the
request is committed in one transaction that also hands out its seq: the namespace's counter
node is write-locked for that transaction (commits around it wait; other requests may be open
meanwhile), and a crash leaves nothing, not even a used id. No draft is written: there is
nothing to resume.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from pydantic import ValidationError

from flowstate.engine.committed import committed_result
from flowstate.engine.driver import (
    CallModel,
    Commit,
    Done,
    Progress,
    RunResult,
    SaveDraft,
    Start,
    StepDriver,
)
from flowstate.engine.index import HistoricalIndex, RenderedIndex
from flowstate.engine.relevance import words
from flowstate.engine.report import StepReport
from flowstate.engine.request_plans import RequestPlans, check_request_text
from flowstate.errors import ConflictError, FlowStateError, UsageError
from flowstate.models import ids
from flowstate.models.active import ActiveState
from flowstate.models.records import Relation
from flowstate.models.step import StepOutput
from flowstate.models.vocab import Category, RelationType
from flowstate.safety.redaction import Redactor
from flowstate.store.codec import describe
from flowstate.store.plans import Plan, Transaction, TxWork

# How long a one-call request is recognised when it is sent again (a host retrying a call
# whose reply was lost does so within seconds; the same fact told again later is new).
REMEMBER_WINDOW_S = 600


def remember_plan(
    agent: RequestPlans[Any],
    text: str,
    delta: Sequence[dict[str, Any]],
    *,
    answer: str = "",
    summary: str = "",
    redact: Redactor[Any] | None = None,
    idempotency_key: str | None = None,
) -> Plan[RunResult]:
    """Begin a request with `text`, apply `delta` under the ISU rules and commit it, all in
    one transaction; UsageError (nothing written) when a rule refuses any of it.

    A retry is stored once: the same `idempotency_key` (by default, one derived from the
    namespace and everything the call says) within `REMEMBER_WINDOW_S` seconds of a commit
    returns that request's result with `already_committed`, and writes nothing."""
    check_request_text(text)
    final = {"type": "final", "answer": answer or "recorded", "summary": summary}
    try:
        step = StepOutput.model_validate({"delta": list(delta), "action": final})
    except ValidationError as e:
        raise UsageError(f"invalid delta: {describe(e)}") from e
    agent.ops.writable("remember")
    if _relates_to_the_past(step):
        yield from agent.refresh_plan()  # the rules check relations against the index shown
    key = _key_of(agent.ops.namespace, text, step, idempotency_key)

    def work() -> TxWork[tuple[RunResult, list[Relation]] | str]:
        return _one_request(agent, text, step, redact, key)

    done: tuple[RunResult, list[Relation]] | str = yield Transaction(work)
    if isinstance(done, str):  # the request this call repeats
        earlier = yield from committed_result(agent.ops, done)
        assert earlier is not None  # committed, and a forget would have taken its key
        return replace(earlier, already_committed=True)
    result, relations = done
    if any(r.type is RelationType.SUPERSEDES for r in relations):
        # The cached index marks what this request superseded (the next refresh would not).
        yield from agent.refresh_plan(relations)
    return result


def _key_of(namespace: str, text: str, step: StepOutput, given: str | None) -> str:
    """The stored idempotency key: everything the call says (so the same fact sent again is
    the same call) and the caller's key, which tells apart calls that say the same thing; a
    blank key is none. Hashed with the namespace. The same key with another fact is another
    call: it is stored, never answered with the first fact's result."""
    said = json.dumps([text, step.model_dump(mode="json"), (given or "").strip()])
    return hashlib.sha256(f"{namespace}\x00{said}".encode()).hexdigest()


def _one_request(
    agent: RequestPlans[Any], text: str, step: StepOutput, redact: Redactor[Any] | None, key: str
) -> TxWork[tuple[RunResult, list[Relation]] | str]:
    ops = agent.ops
    seq, duplicate = yield from ops.begin_in_transaction(key, REMEMBER_WINDOW_S)
    if duplicate is not None:
        return duplicate
    active = ActiveState(
        namespace=ops.namespace, request_id=ids.request_id(seq), seq=seq, text=text
    )
    index = agent.index.render(text) if _relates_to_the_past(step) else _no_index()
    driver = StepDriver(active, index, agent.logic, start=Start.NEW, redact=redact)
    command = driver.start()
    report, sent = StepReport(0), False
    while not isinstance(command, Done):
        outcome: Any = None
        if isinstance(command, CallModel):
            if sent:  # asked for another step: the delta was refused, the answer held back
                raise _refusal(step, index, report.messages)
            outcome, sent = step, True
        elif isinstance(command, Commit):
            request = command.bundle.request.model_copy(update={"idempotency_key": key})
            bundle = command.bundle.model_copy(update={"request": request})
            yield from ops.commit_in_transaction(bundle)  # rolled back on a refusal
        elif isinstance(command, Progress):
            report = command.report
        elif not isinstance(command, SaveDraft):  # one transaction: no draft to keep
            raise FlowStateError(f"a one-call request cannot perform {type(command).__name__}")
        command = driver.send(outcome)
    return command.result, command.bundle.relations


def _refusal(step: StepOutput, index: RenderedIndex, messages: list[str]) -> UsageError:
    """Why the delta was refused: a ConflictError when it supersedes a past state that another
    request superseded first (the caller supersedes the newer one instead), else a UsageError."""
    said = "; ".join(messages) or "the delta was refused"
    targets = {
        rel.target
        for op in step.delta
        for rel in getattr(op, "relations", ())
        if rel.type is RelationType.SUPERSEDES
    }
    live = {k: v for k, v in index.superseded.items() if k not in index.superseder_removed}
    conflicts = sorted((t, live[t]) for t in targets if t in live)
    return ConflictError(said, conflicts) if conflicts else UsageError(said)


def _relates_to_the_past(step: StepOutput) -> bool:
    """Whether a relation names a past state (the index decides whether it is visible)."""
    return any("." in rel.target for op in step.delta for rel in getattr(op, "relations", ()))


@cache
def _no_index() -> RenderedIndex:
    return HistoricalIndex((), 2_000, None).render()


@dataclass(frozen=True)
class Fact:
    """One fact to remember in one call (`FlowState.remember_fact`): the state it becomes,
    and the request that says it.

        Fact("User's name is Ana", Category.ENVIRONMENT, text="I'm Ana")
    """

    summary: str
    category: Category | str
    content: str | None = None  # default: the summary
    key: str | None = None  # default: from the summary (`key_from`)
    relations: Sequence[dict[str, str]] = ()  # to states already shown, e.g. SUPERSEDES
    text: str | None = None  # what the user said (default: the summary)
    idempotency_key: str | None = None  # default: from the namespace and everything above

    def op(self) -> dict[str, Any]:
        """The add op this fact is."""
        category = self.category.value if isinstance(self.category, Category) else self.category
        return {
            "op": "add",
            "key": self.key or key_from(self.summary),
            "category": category,
            "summary": self.summary,
            "content": self.content or self.summary,
            "relations": [dict(r) for r in self.relations],
        }


def key_from(summary: str) -> str:
    """A state key from a fact's summary: `Lives in Porto` -> `lives_porto`."""
    ascii_words = [w for w in words(summary) if re.fullmatch(r"[a-z0-9]+", w)]
    key = "_".join(ascii_words[:5])[:48].rstrip("_")
    if not key or not key[0].isalpha():
        key = f"fact_{key}".rstrip("_")
    return key
