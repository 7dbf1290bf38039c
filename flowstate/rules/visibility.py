"""What the model can see right now: the input both rule sets check against."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Visibility:
    """Ids visible to the model at this step, built by the engine from its Active State."""

    request_id: str
    index_states: frozenset[str]  # past state ids listed in the (non-collapsed) index
    collapsed_requests: frozenset[str]  # past request ids shown as one line
    # Past request ids the index lists in full (their states' lines shown): openable too,
    # for their text.
    listed_requests: frozenset[str] = frozenset()
    opened_states: frozenset[str] = frozenset()  # listed by opening a collapsed request
    revealed: frozenset[str] = frozenset()  # past states whose content is open
    relation_ends: frozenset[str] = frozenset()  # ids shown as far ends of revealed relations
    observations: frozenset[str] = frozenset()  # this request's observation ids
    opened_observations: frozenset[str] = field(default_factory=frozenset)
    # Past states known to be superseded (by a committed state, or by a state of this
    # request), and by which.
    superseded: Mapping[str, str] = field(default_factory=dict)
    # The seqs of the index's folded line: every request id in it may be opened.
    folded_seqs: tuple[int, int] | None = None

    def folded(self, request_id: str) -> bool:
        """Whether the folded line names this request id."""
        if self.folded_seqs is None:
            return False
        first, last = self.folded_seqs
        return first <= int(request_id[1:]) <= last

    @property
    def past_states(self) -> frozenset[str]:
        """Past state ids the model may name: indexed, opened, revealed, or a relation end."""
        return self.index_states | self.opened_states | self.revealed | self.relation_ends

    def own_id(self, key: str) -> str:
        return f"{self.request_id}.{key}"
