"""Readable ids: `r12` (request), `r12.hotel_budget` (state), `r12.o3` (observation).

They are unique within a namespace and short enough to quote in a prompt.
"""

from __future__ import annotations

import re

from flowstate.errors import ValidationFailed

KEY_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"
NAMESPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$"


def check_namespace(namespace: object) -> str:
    """`namespace` when it is a valid namespace name; ValidationFailed otherwise."""
    if not isinstance(namespace, str) or not re.fullmatch(NAMESPACE_PATTERN, namespace):
        said = repr(namespace)[:60] + ("..." if len(repr(namespace)) > 60 else "")
        raise ValidationFailed(
            f"invalid namespace {said}: use 1-128 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    return namespace


REQUEST_ID_PATTERN = r"^r[1-9][0-9]*$"
STATE_ID_PATTERN = r"^r[1-9][0-9]*\.[a-z][a-z0-9_]{0,63}$"
OBSERVATION_ID_PATTERN = r"^r[1-9][0-9]*\.o[1-9][0-9]*$"
DECISION_ID_PATTERN = r"^r[1-9][0-9]*\.a[1-9][0-9]*$"

_REQUEST = re.compile(REQUEST_ID_PATTERN)
_STATE = re.compile(STATE_ID_PATTERN)
_OBSERVATION = re.compile(OBSERVATION_ID_PATTERN)
_KEY = re.compile(KEY_PATTERN)
_RESERVED_KEY = re.compile(r"^[oa][0-9]+$")
_DECISION = re.compile(DECISION_ID_PATTERN)


def request_id(seq: int) -> str:
    return f"r{seq}"


def state_id(request: str, key: str) -> str:
    return f"{request}.{key}"


def observation_id(request: str, n: int) -> str:
    return f"{request}.o{n}"


def decision_id(request: str, n: int) -> str:
    return f"{request}.a{n}"


def is_key(text: str) -> bool:
    # `o<digits>` and `a<digits>` are reserved: a state id never collides with the id of an
    # observation or of an action decision.
    return bool(_KEY.fullmatch(text)) and not _RESERVED_KEY.fullmatch(text)


def is_request_id(text: str) -> bool:
    return bool(_REQUEST.fullmatch(text))


def is_observation_id(text: str) -> bool:
    # Observation ids look like state ids whose key is o<digits>; keys of that shape are reserved.
    return bool(_OBSERVATION.fullmatch(text))


def is_decision_id(text: str) -> bool:
    return bool(_DECISION.fullmatch(text))


def is_state_id(text: str) -> bool:
    return bool(_STATE.fullmatch(text)) and not is_observation_id(text) and not is_decision_id(text)


def request_of(any_id: str) -> str:
    """The request an id belongs to: `r12.hotel` -> `r12`."""
    return any_id.split(".", 1)[0]


def request_seq(rid: str) -> int:
    return int(rid[1:])
