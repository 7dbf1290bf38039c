"""A retention policy nested past Python's recursion limit is a usage error, not a crash."""

import pytest

from flowstate.errors import UsageError
from flowstate.safety.retention import RetentionPolicy


def test_a_deeply_nested_policy_is_refused_with_its_source_named() -> None:
    with pytest.raises(UsageError, match="FLOWSTATE_RETENTION: .* is not JSON"):
        RetentionPolicy.parse("[" * 100_000, "FLOWSTATE_RETENTION")
