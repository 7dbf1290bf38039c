"""FlowState's exceptions: one root, split by who has to act.

`UsageError` means the caller asked for something invalid (fix the call);
`FlowStateRuntimeError` means the world failed underneath a valid call (retry or repair).
"""

from __future__ import annotations


class FlowStateError(Exception):
    """Root of every error FlowState raises on purpose."""


# --- usage mistakes: the caller must change what it asks --------------------------------


class UsageError(FlowStateError):
    """The call itself is invalid: bad argument, unknown id, forbidden operation."""


class NotFoundError(UsageError):
    """An id does not exist in this namespace (it may exist elsewhere; that is never revealed)."""


class ValidationFailed(UsageError):
    """Data failed FlowState's own checks before touching the database."""


class ReadOnlyError(UsageError):
    """A write was attempted through a namespace opened read-only."""


# --- run-time failures: the environment let a valid call down ----------------------------


class FlowStateRuntimeError(FlowStateError):
    """Something outside the caller's control failed."""


class StoreError(FlowStateRuntimeError):
    """The Neo4j database failed or could not be reached."""


class StoreUnavailable(StoreError):
    """No Neo4j answered at the configured address."""


class NamespaceBusy(FlowStateRuntimeError):
    """Another writer holds the namespace's lease: one request at a time runs in a namespace.

    `owner` names the holder (host:pid:tag), `expires` when its lease runs out unless renewed.
    """

    def __init__(self, message: str, owner: str | None = None, expires: object = None) -> None:
        super().__init__(message)
        self.owner = owner
        self.expires = expires


class LocalServerError(FlowStateRuntimeError):
    """The managed local Neo4j server could not be prepared, started or stopped."""


class ModelError(FlowStateRuntimeError):
    """The language model failed or kept returning output that could not be used."""
