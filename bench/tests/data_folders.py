"""What a test does when the data folder it needs is missing: in CI (`CI` set to true, as
`.ci/run` sets it) that is a failure, since a green run would then claim parity nobody checked;
on a developer's machine it is a skip that names the folder and the variable to set."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

# Our own generated price cases, scored by the official MemoryArena code (README there).
SHIPPED_PRICE_CASES = Path(__file__).parent / "data" / "arena-price-parity"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def missing(what: str, how: str) -> NoReturn:
    """Fail in CI, skip elsewhere; `what` is the data that is missing, `how` how to supply it."""
    if in_ci():
        pytest.fail(f"{what}; CI must run with it ({how})", pytrace=False)
    pytest.skip(f"{what}; skipped outside CI ({how})")
