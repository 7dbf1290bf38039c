"""Progressive State Access: which past ids the model may open at a step.

Only what the model has been shown can be opened: state ids in the index (or listed by an
opened request), the far ends of revealed relations, and request ids the index shows
(opening one shows what it asked and lists its states). Ids of other
namespaces are never shown, so they can never pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flowstate.models import ids
from flowstate.rules.limits import Limits
from flowstate.rules.violations import Violation
from flowstate.rules.visibility import Visibility


@dataclass(frozen=True)
class AccessDecision:
    states: list[str]  # past state ids to reveal (content + relations)
    requests: list[str]  # request ids whose text and state lines to show
    observations: list[str]  # past observation ids (relation ends) to open
    violations: list[Violation]
    already_open: list[str]  # asked again; harmless, nothing to do


def check_access(asked: Sequence[str], vis: Visibility, limits: Limits) -> AccessDecision:
    unique = list(dict.fromkeys(a.strip() for a in asked))
    states: list[str] = []
    requests: list[str] = []
    observations: list[str] = []
    violations: list[Violation] = []
    already: list[str] = []
    if len(unique) > limits.max_access_per_step:
        violations.append(
            Violation(
                "access",
                "too_many_ids",
                f"{len(unique)} ids; at most {limits.max_access_per_step} per step. "
                "Ask for the most important first; ask for the rest in a later step",
            )
        )
        return AccessDecision([], [], [], violations, [])
    for item in unique:
        where = f"access {item}"
        if item in vis.revealed or item in vis.opened_observations:
            already.append(item)
        elif ids.is_request_id(item):
            if item in vis.collapsed_requests or item in vis.listed_requests or vis.folded(item):
                requests.append(item)
            elif item == vis.request_id:
                violations.append(
                    Violation(
                        where,
                        "own_request",
                        "that is the current request; its states are already in the Active State",
                    )
                )
            else:
                violations.append(
                    Violation(
                        where,
                        "not_listed",
                        "only requests the index shows can be opened",
                    )
                )
        elif ids.is_state_id(item) and ids.request_of(item) == vis.request_id:
            violations.append(
                Violation(
                    where,
                    "own_state",
                    "that state belongs to this request and is already in the Active State",
                )
            )
        elif ids.is_state_id(item) and item in vis.past_states:
            states.append(item)
        elif ids.is_observation_id(item) and item in vis.relation_ends:
            observations.append(item)
        elif ids.is_observation_id(item) and item in vis.observations:
            violations.append(
                Violation(
                    where,
                    "own_observation",
                    "that observation belongs to this request and is already shown",
                )
            )
        else:
            violations.append(
                Violation(
                    where,
                    "not_visible",
                    "unknown id: only ids shown in the index, by a search or in revealed "
                    "relations can be accessed",
                )
            )
    return AccessDecision(states, requests, observations, violations, already)
