"""The benchmarks' tests reuse the library's real-Neo4j fixtures: one server per session,
one namespace per test."""

import os
from pathlib import Path

import pytest

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
        pytest.skip("FLOWSTATE_TAU_DATA is not set: no tau-bench data folder to test with")
    return TauData(Path(root))


@pytest.fixture(scope="session")
def arena_parity() -> Path:
    """The MemoryArena parity cases (travel.jsonl, shopping.jsonl, formal.jsonl, scored by the
    official code): the folder FLOWSTATE_ARENA_PARITY_DATA names, else `arena-parity/` in the
    FLOWSTATE_TAU_DATA folder (`.ci/run` sets both)."""
    named = os.environ.get("FLOWSTATE_ARENA_PARITY_DATA")
    tau = os.environ.get("FLOWSTATE_TAU_DATA")
    root = Path(named) if named else Path(tau) / "arena-parity" if tau else None
    if root is None:
        pytest.skip("neither FLOWSTATE_ARENA_PARITY_DATA nor FLOWSTATE_TAU_DATA is set")
    if not (root / "travel.jsonl").is_file():
        pytest.skip(f"{root} holds no MemoryArena parity cases (travel.jsonl)")
    return root
