"""Opening what the access rules let through: one `Reveal` fetch, its findings taken into the
Active State. Shared by the step driver (inside a request) and `Browse` (outside one)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from flowstate.engine.commands import Reveal, Revealed
from flowstate.engine.report import Rejection, RejectionKind, StepReport
from flowstate.models import ids
from flowstate.models.active import ActiveState
from flowstate.models.records import Observation
from flowstate.models.views import IndexState, RevealedState


def reveal_of(asked: list[str]) -> Reveal:
    """The fetch of ids the access rules let through, sorted by kind."""
    return Reveal(
        states=[i for i in asked if ids.is_state_id(i)],
        requests=[i for i in asked if ids.is_request_id(i)],
        observations=[i for i in asked if ids.is_observation_id(i)],
    )


def take_in(active: ActiveState, found: Revealed, report: StepReport) -> list[str]:
    """Open what a `Reveal` found in `active` (visible from the next call) and list it on
    `report`; the messages for ids forgotten since they were shown (the rest is open)."""
    for rev in found.states:
        active.revealed[rev.state.id] = rev
    active.opened_requests.update(found.requests)
    active.request_texts.update(found.request_texts)
    for obs in found.observations:
        active.opened_observations[obs.id] = obs
    report.opened = [
        *(r.state.id for r in found.states),
        *found.requests,
        *(o.id for o in found.observations),
    ]
    missing = [
        f"access {item}: not found in namespace {active.namespace!r} (forgotten since it was shown)"
        for item in found.missing
    ]
    report.rejections += [Rejection(RejectionKind.MISSING, m) for m in missing]
    return missing


def drop_forgotten(active: ActiveState, gone: Callable[[str], bool]) -> None:
    """Drop from `active`'s view what was just forgotten elsewhere: revealed copies, listed
    lines, search hits, pending access (its next save drops it from the draft too)."""
    from flowstate.store.drafts import scrub

    scrubbed = scrub(active.model_dump_json(), gone)
    if scrubbed is None:
        return
    fresh = ActiveState.model_validate_json(scrubbed)
    kept = ("revealed", "opened_requests", "request_texts", "opened_observations")
    for name in (*kept, "pending_access", "found"):
        setattr(active, name, getattr(fresh, name))


def within_budget(active: ActiveState, ranked: Sequence[str], budget: int) -> None:
    """Keep the prefetched states `ranked` (best first) open while their text fits `budget`
    tokens; close the others again: they stay in the index, for the model to open."""
    from flowstate.engine.active_text import revealed_text
    from flowstate.tokens import count_tokens

    spent = 0
    for state_id in ranked:
        rev = active.revealed.get(state_id)
        if rev is None:
            continue
        cost = count_tokens(revealed_text(rev))
        if spent + cost > budget:
            del active.revealed[state_id]
        else:
            spent += cost


def show(active: ActiveState, state_ids: Sequence[str]) -> None:
    """Count `state_ids` as shown to the model (a search listed them): openable like index
    lines."""
    found = active.found
    found.extend(i for i in dict.fromkeys(state_ids) if i not in found)


@dataclass(frozen=True)
class Opened:
    """What `reveal` opened, and every id it refused or could not find, with the reason.
    A revealed state's relations show only their type and the other end's id."""

    states: list[RevealedState] = field(default_factory=list)
    requests: dict[str, list[IndexState]] = field(default_factory=dict)
    request_texts: dict[str, str] = field(default_factory=dict)  # what each request asked
    rejections: list[str] = field(default_factory=list)
    report: StepReport | None = field(default=None, repr=False)
    # Past observations shown at the far end of a revealed EVIDENCED_BY relation.
    observations: list[Observation] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        active: ActiveState,
        ids: Sequence[str],
        rejections: list[str],
        report: StepReport | None = None,
    ) -> Opened:
        """What of `ids` is open in `active`, with the `rejections` told."""
        return cls(
            states=[active.revealed[i] for i in ids if i in active.revealed],
            requests={i: active.opened_requests[i] for i in ids if i in active.opened_requests},
            request_texts={i: active.request_texts[i] for i in ids if i in active.request_texts},
            rejections=rejections,
            report=report,
            observations=[
                active.opened_observations[i] for i in ids if i in active.opened_observations
            ],
        )
