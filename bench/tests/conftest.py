"""The benchmarks' tests reuse the library's real-Neo4j fixtures: one server per session,
one namespace per test."""

import os
from pathlib import Path

import pytest
from data_folders import SHIPPED_PRICE_CASES, missing

from flowstate_bench.tau.data import TauData
from tests.conftest import namespace, neo4j_settings, scripted_models  # noqa: F401
from tests.neo4j.conftest import (  # noqa: F401
    async_shell,
    bolt_proxy,
    other_repo,
    raw,
    repo,
    shell,
    store,
    wire,
    wire_store,
)


@pytest.fixture(scope="session")
def tau_data() -> TauData:
    """The tau-bench data folder named by FLOWSTATE_TAU_DATA (`.ci/run` sets it)."""
    root = os.environ.get("FLOWSTATE_TAU_DATA")
    if not root:
        missing("FLOWSTATE_TAU_DATA is not set: no tau-bench data folder", "set it to the folder")
    return TauData(Path(root))


@pytest.fixture(scope="session")
def arena_parity() -> Path:
    """The MemoryArena parity cases (travel.jsonl, shopping.jsonl, formal.jsonl, scored by the
    official code): the folder FLOWSTATE_ARENA_PARITY_DATA names, else `arena-parity/` in the
    FLOWSTATE_TAU_DATA folder (`.ci/run` sets both)."""
    named = os.environ.get("FLOWSTATE_ARENA_PARITY_DATA")
    tau = os.environ.get("FLOWSTATE_TAU_DATA")
    root = Path(named) if named else Path(tau) / "arena-parity" if tau else None
    how = "set FLOWSTATE_ARENA_PARITY_DATA to the folder"
    if root is None:
        missing("neither FLOWSTATE_ARENA_PARITY_DATA nor FLOWSTATE_TAU_DATA is set", how)
    for name in ("travel.jsonl", "shopping.jsonl", "formal.jsonl"):
        if not (root / name).is_file():
            missing(f"{root} holds no MemoryArena parity cases ({name})", how)
    return root


@pytest.fixture(scope="session")
def arena_price_parity() -> Path:
    """MemoryArena shopping price cases (shopping.jsonl, scored by the official code): the
    folder FLOWSTATE_ARENA_PRICE_PARITY_DATA names, else the set shipped in
    `bench/tests/data/arena-price-parity/`."""
    named = os.environ.get("FLOWSTATE_ARENA_PRICE_PARITY_DATA")
    root = Path(named) if named else SHIPPED_PRICE_CASES
    if not (root / "shopping.jsonl").is_file():
        missing(
            f"{root} holds no shopping price cases (shopping.jsonl)",
            "point FLOWSTATE_ARENA_PRICE_PARITY_DATA at a folder that does, or unset it",
        )
    return root
