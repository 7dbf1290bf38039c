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


class WrongHandle(UsageError):
    """A call on an open request did not present the handle its `begin` gave (none, or
    another's): only the client that began a request acts on it. Nothing was done."""


class RequestEnded(UsageError):
    """A call on a request its client discarded, or that expired idle: nothing of it was
    committed. `how` says which ("discarded" or "expired")."""

    def __init__(self, message: str, how: str) -> None:
        super().__init__(message)
        self.how = how


class ReadOnlyError(UsageError):
    """A write was attempted through a namespace opened read-only."""


# --- run-time failures: the environment let a valid call down ----------------------------


class FlowStateRuntimeError(FlowStateError):
    """Something outside the caller's control failed."""


class StoreError(FlowStateRuntimeError):
    """The Neo4j database failed or could not be reached."""


class StoreUnavailable(StoreError):
    """No Neo4j answered at the configured address."""


class CommitUncertain(StoreUnavailable):
    """The connection dropped while a commit was in flight: it may or may not have landed.
    Look before committing again (an agent's `resume()` does)."""


class ConflictError(UsageError):
    """A request cannot commit as it is because of what another request committed first: it
    supersedes a state that another request superseded meanwhile. `conflicts` holds
    `(superseded state id, the newer state's id)` pairs; the model is told, and revises."""

    def __init__(self, message: str, conflicts: list[tuple[str, str]]) -> None:
        super().__init__(message)
        self.conflicts = conflicts


class RequestHeld(FlowStateRuntimeError):
    """Another live writer holds this request (it is running it now), or took it over.

    `request_id` names the request, `owner` the holder (host:pid:tag), `expires` when its hold
    lapses unless renewed (then anyone may resume or discard the request).
    """

    def __init__(
        self,
        message: str,
        request_id: str | None = None,
        owner: str | None = None,
        expires: object = None,
    ) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.owner = owner
        self.expires = expires


class NamespaceBusy(FlowStateRuntimeError):
    """A namespace-wide change (forgetting all of it, an import) was refused because live
    writers run requests there, or a request could not begin (or be taken over) because the
    whole namespace is being forgotten. `owner` names one holder (or the forgetting writer),
    `expires` when its hold (or the forget's fence) lapses unless renewed."""

    def __init__(self, message: str, owner: str | None = None, expires: object = None) -> None:
        super().__init__(message)
        self.owner = owner
        self.expires = expires


class LocalServerError(FlowStateRuntimeError):
    """The managed local Neo4j server could not be prepared, started or stopped."""


class ModelError(FlowStateRuntimeError):
    """The language model failed or kept returning output that could not be used (before a
    request did anything: nothing of it was kept)."""


class RequestInterrupted(FlowStateRuntimeError):
    """A request that had begun was cut short, and is kept: `resume` or `discard` it.

    `request_id` names it; `cause` (also `__cause__`) is what failed: a `StoreError` when the
    database did, a `ModelError` when the model did."""

    def __init__(self, message: str, request_id: str, cause: FlowStateError) -> None:
        super().__init__(message)
        self.request_id = request_id
        self.cause = cause
