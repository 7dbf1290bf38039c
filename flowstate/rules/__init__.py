"""Pure rules: what a state delta and an access request must satisfy (ISU and PSA)."""

from flowstate.rules.isu import Applied, apply_delta, check_delta
from flowstate.rules.limits import Limits
from flowstate.rules.psa import AccessDecision, check_access
from flowstate.rules.violations import Violation
from flowstate.rules.visibility import Visibility

__all__ = [
    "AccessDecision",
    "Applied",
    "Limits",
    "Violation",
    "Visibility",
    "apply_delta",
    "check_access",
    "check_delta",
]
