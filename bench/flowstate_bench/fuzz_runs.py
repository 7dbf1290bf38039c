"""Fuzzed replies through the engine: the pure step logic per case, and whole requests on Neo4j.

`fast_case` runs one request's replies through the agent's own step driver
(`flowstate.engine.driver`), its I/O done in memory: reveals served from the fixed world,
every draft checked to round-trip, the bundle checked whole; it raises `FuzzFailure` when an
invariant breaks. `full_case` runs the
same replies through a real agent on Neo4j and also requires the committed graph to equal
what the fast path built: the rules do not depend on the I/O around them, and stored text
comes back byte-equal.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from flowstate.api import FlowState
from flowstate.engine.driver import (
    Approve,
    CallModel,
    CheckCommitted,
    Commit,
    Done,
    FindMissing,
    Progress,
    Reveal,
    Revealed,
    RunTool,
    SaveDraft,
    Start,
    StepDriver,
)
from flowstate.engine.step import AgentConfig, StepLogic
from flowstate.engine.transcript import Transcript
from flowstate.llm.client import Completion
from flowstate.llm.parsing import parse_step
from flowstate.llm.scripted import Message, ScriptedModel, unregister
from flowstate.models import Outcome, RequestBundle, StepOutput, Usage
from flowstate.models.active import ActiveState
from flowstate.models.records import LINE_BREAKS
from flowstate.store import Repository, Store
from flowstate_bench import fuzz_world as world
from flowstate_bench.fault_audit import audit

NAMESPACE = "fuzz"
TEXT = "Plan the next part of the trip"
_DONE = '{"action": {"type": "final", "answer": "out of replies"}}'


class FuzzFailure(AssertionError):
    """An invariant broke for one case; the message says which."""


@dataclass
class CaseStats:
    replies: int = 0
    unparsed: int = 0  # replies refused by the parser (each told to the model)
    rejections: int = 0  # every message told to the model
    states: int = 0
    relations: int = 0
    tool_runs: int = 0
    answered: bool = False
    bundle: RequestBundle | None = field(default=None, repr=False)


def config(replies: int) -> AgentConfig:
    return AgentConfig(max_steps=replies + 1, index_budget_tokens=world.INDEX_BUDGET)


def _approve(_asked: object) -> bool:
    return True  # consequential calls that pass the citation checks are approved


def fast_case(replies: list[str], namespace: str = NAMESPACE) -> CaseStats:
    """One request of `replies` (then a final answer) through the real step driver, its I/O
    served in memory: replies from the list, reveals from the fixed world, drafts checked to
    round-trip, the commit checked for a whole bundle."""
    stats = CaseStats(replies=len(replies))
    logic = StepLogic(world.tools(), config(len(replies)), has_approver=True)
    active = ActiveState(namespace=namespace, request_id=world.REQUEST_ID, seq=4, text=TEXT)
    index = world.rendered_index()
    driver = StepDriver(active, index, logic, start=Start.NEW)
    queue = [*replies, _DONE]
    seen: set[str] = set()
    command = driver.start()
    while not isinstance(command, Done):
        if isinstance(command, CallModel):
            if command.save is not None:
                _perform(command.save, active, namespace, stats)
            text = queue.pop(0) if queue else _DONE
            parsed = parse_step(text, StepOutput)
            stats.unparsed += parsed.value is None
            seen |= logic.visibility(active, index).past_states
            outcome: object = Completion(text, parsed.value, Usage(), parsed.error)
            command = driver.send(outcome)
            if isinstance(command, Done):
                break
            _check_told(active.rejections, parsed.error)
            stats.rejections += len(active.rejections)
            continue
        command = driver.send(_perform(command, active, namespace, stats))
    result = command.result
    stats.answered = result.outcome is Outcome.ANSWERED
    _check_bundle(command.bundle, namespace, seen)
    stats.states, stats.relations = len(command.bundle.states), len(command.bundle.relations)
    stats.bundle = command.bundle
    return stats


def _perform(command: object, active: ActiveState, namespace: str, stats: CaseStats) -> object:
    """What the agent's shell does for each command, in memory."""
    if isinstance(command, SaveDraft):
        _check_draft(command.payload, active)
        return None
    if isinstance(command, Approve):
        return _approve(command.approval)
    if isinstance(command, RunTool):
        stats.tool_runs += 1
        return command.tool.call(command.arguments)
    if isinstance(command, Reveal):
        return _reveal(command, namespace)
    if isinstance(command, Commit | Progress):
        return None
    if isinstance(command, FindMissing):
        return set()
    if isinstance(command, CheckCommitted):
        return False
    raise FuzzFailure(f"the driver asked for an unknown command {command!r}")


def _check_told(told: list[str], parse_error: str | None) -> None:
    if parse_error is not None and not told:
        raise FuzzFailure(f"a reply the parser refused ({parse_error}) was not told")
    bad = [t for t in told if not isinstance(t, str) or not t.strip()]
    if bad:
        raise FuzzFailure(f"empty rejection messages: {bad!r}")


def _check_draft(payload: str, active: ActiveState) -> None:
    payload.encode("utf-8")  # what save_draft requires of the payload
    if ActiveState.model_validate_json(payload) != active:
        raise FuzzFailure("the draft does not round-trip to the same Active State")


def _reveal(command: Reveal, namespace: str) -> Revealed:
    """What the agent fetches from Neo4j, served from the fixed world."""
    states = [world.revealed(namespace)[i] for i in command.states if i in world.PAST_STATE_IDS]
    requests = {i: world.opened_request(namespace, i) for i in command.requests}
    observations = [
        world.observation(namespace, i)
        for i in command.observations
        if i in world.PAST_OBSERVATION_IDS
    ]
    strays = [
        i
        for i in [*command.states, *command.observations]
        if i not in world.PAST_STATE_IDS and i not in world.PAST_OBSERVATION_IDS
    ]
    if strays:
        raise FuzzFailure(f"access to {strays!r} passed the rules but is not in the world")
    return Revealed(states=states, requests=requests, observations=observations)


def _check_bundle(bundle: RequestBundle, namespace: str, seen: set[str]) -> None:
    RequestBundle.model_validate(bundle.model_dump())  # raises ValidationError when broken
    own = {s.id for s in bundle.states}
    for s in bundle.states:
        if (s.namespace, s.request_id) != (namespace, world.REQUEST_ID):
            raise FuzzFailure(f"{s.id} belongs to {s.namespace}/{s.request_id}")
        if any(ch in s.summary for ch in LINE_BREAKS) or not s.summary.strip():
            raise FuzzFailure(f"{s.id} has a summary that is not one non-empty line")
    stray = [r.target for r in bundle.relations if r.target not in own | seen]
    if stray:
        raise FuzzFailure(f"relations to ids the model never saw: {stray}")
    obs = {o.id for o in bundle.observations}
    if any(e.observation not in obs for e in bundle.evidence):
        raise FuzzFailure("evidence cites an observation that is not committed")


# --- whole requests on Neo4j ----------------------------------------------------------------


def full_case(store: Store, replies: list[str], prefix: str = "fuzz_full") -> CaseStats:
    """The replies through a real agent in a fresh namespace (forgotten afterwards)."""
    namespace = f"{prefix}_{uuid.uuid4().hex[:10]}"
    expected = fast_case(replies, namespace)
    repo = Repository(store, namespace)
    queue = list(replies)

    def policy(_messages: list[Message]) -> str:
        return queue.pop(0) if queue else _DONE

    model = ScriptedModel.policy(namespace, policy)
    try:
        for bundle in world.past_bundles(namespace):
            repo.commit(bundle)
        agent = FlowState(store, namespace).agent(
            model.client(), world.tools(), config=config(len(replies)), approve=_approve
        )
        agent.on_call = seen = Transcript()
        result = agent.run(TEXT)
        for prompt in seen.prompts:
            _check_prompt(prompt[-1]["content"])
        found = audit(repo)
        if found.problems:
            raise FuzzFailure(f"committed graph is not whole: {found.problems}")
        [*_, committed] = repo.bundles()
        _same(committed, expected.bundle)
        if result.rejections != expected.rejections:
            raise FuzzFailure(
                f"{result.rejections} rejections told, {expected.rejections} expected"
            )
    finally:
        unregister(model.name)
        repo.forget_namespace(force=True)
    return expected


def _check_prompt(prompt: str) -> None:
    _, _, told = prompt.partition("# Rejected at your previous step\n")
    for line in told.split("\n\nStep ")[0].splitlines() if told else []:
        if line.startswith("- ") and not line[2:].strip():
            raise FuzzFailure("an empty rejection line reached the prompt")


def _same(got: RequestBundle, want: RequestBundle | None) -> None:
    """The committed request equals the fast path's, timestamps and usage aside."""
    assert want is not None

    def facts(b: RequestBundle) -> tuple:
        return (
            (b.request.id, b.request.summary, b.request.answer, b.request.outcome, b.request.steps),
            sorted((s.id, s.category, s.summary, s.content) for s in b.states),
            sorted((r.source, r.type, r.target) for r in b.relations),
            sorted((e.state, e.observation) for e in b.evidence),
            sorted((o.id, o.tool, o.arguments, o.output, o.is_error) for o in b.observations),
            sorted((d.id, d.tool, d.arguments, tuple(d.cites), d.approved) for d in b.decisions),
        )

    if facts(got) != facts(want):
        diff = [i for i, (g, w) in enumerate(zip(facts(got), facts(want), strict=True)) if g != w]
        raise FuzzFailure(f"committed request differs from the rules' result in parts {diff}")
