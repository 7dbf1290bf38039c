"""The reader agent and the two ablations (the engine's prefetch, the protocol's one-step
access-and-act) on the real engine and a real Neo4j, in both harnesses; and a run whose
database goes away, resumed from its journal."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flowstate.errors import StoreError
from flowstate.settings import Neo4jSettings
from flowstate.store import Store
from flowstate_bench import reader
from flowstate_bench.arena import oracle as arena_oracle
from flowstate_bench.arena.data import ArenaData
from flowstate_bench.arena.report import build_report as arena_report
from flowstate_bench.arena.runner import ArenaRunner
from flowstate_bench.arena.runner import RunConfig as ArenaConfig
from flowstate_bench.harness import Journal
from flowstate_bench.tau import oracle as tau_oracle
from flowstate_bench.tau.cli import tau
from flowstate_bench.tau.data import TauData
from flowstate_bench.tau.report import build_report as tau_report
from flowstate_bench.tau.runner import RunConfig as TauConfig
from flowstate_bench.tau.runner import TauRunner

pytestmark = pytest.mark.neo4j

FIXTURES = Path(__file__).parents[1] / "fixtures" / "memoryarena"
PLANNED = ["7", "8", "14", "17", "23"]  # airline tasks whose changes wait for a later "yes"


class Recording(reader.Opener):
    """The reader, recording what it was shown and what it picked."""

    seen: list[tuple[str, list[str]]] = []

    def pick(self, text: str, request: str) -> list[str]:
        picks = super().pick(text, request)
        Recording.seen.append((text, picks))
        return picks


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    Recording.seen = []
    monkeypatch.setattr(tau_oracle, "Opener", Recording)
    monkeypatch.setattr(arena_oracle, "Opener", Recording)
    return Recording.seen


def _only_what_was_shown(seen: list[tuple[str, list[str]]]) -> None:
    for text, picks in seen:
        assert len(picks) <= reader.DEFAULT_K
        for pick in picks:  # an index line or a relation's far end in that very prompt
            assert re.search(rf"(?m)^(  |- ){re.escape(pick)} \[|-> {re.escape(pick)}\b|^{pick}: ",
                             text), pick  # fmt: skip


def _arena(store: Store, tmp: Path, **extra: Any) -> tuple[ArenaRunner, dict[str, Any]]:
    config = ArenaConfig(
        configs=extra.pop("configs", ["bundled_shopping", "formal_reasoning_math"]),
        strategies=extra.pop("strategies", ["flowstate"]),
        product_db=FIXTURES / "product_db",
        travel_db=FIXTURES / "travel_db",
        cache_dir=tmp / "cache",
        **extra,
    )
    runner = ArenaRunner(config, ArenaData(FIXTURES), store)
    runs = runner.run()
    return runner, arena_report(config, runs, runner.resources.judge)


def test_tau_reader_opens_nothing_behind_a_bare_yes_and_equals_the_oracle_elsewhere(
    store: Store, tau_data: TauData, recording: list[tuple[str, list[str]]]
) -> None:
    config = TauConfig(
        domain="airline", strategies=["flowstate", "full", "bm25"], agent="reader",
        task_ids=PLANNED,
    )  # fmt: skip
    convs = TauRunner(config, tau_data, store).run()
    rows = {r["strategy"]: r for r in tau_report(config, convs)["reader_vs_oracle"]}
    fs = rows["flowstate"]
    assert fs["reader_chooses"] and fs["oracle"]["recall"] == 1.0
    # "Yes, please go ahead." shares no word with any index line: nothing matches, nothing
    # opens. What the reader recalls is only the plans short enough for their index lines.
    assert recording and all(picks == [] for _, picks in recording)
    assert fs["reader"]["recall"] < 1.0 and fs["reader"]["pass1"] < 1.0
    for name in ("full", "bm25"):
        assert not rows[name]["reader_chooses"] and rows[name]["oracle"] == rows[name]["reader"]


def test_arena_reader_opens_only_what_it_was_shown(
    store: Store, tmp_path: Path, recording: list[tuple[str, list[str]]]
) -> None:
    _, report = _arena(store, tmp_path, agent="reader", strategies=["flowstate", "full"])
    rows = {(r["group"], r["strategy"]): r for r in report["reader_vs_oracle"]}
    assert {k for k in rows} == {(g, s) for g in ("shop", "math") for s in ("flowstate", "full")}
    _only_what_was_shown(recording)
    assert any(picks for _, picks in recording)
    for group in ("shop", "math"):
        fs, full = rows[(group, "flowstate")], rows[(group, "full")]
        assert fs["oracle"]["recall"] == 1.0
        assert fs["reader"]["recall"] is not None and 0 <= fs["reader"]["recall"] <= 1
        assert full["oracle"] == full["reader"]  # the memory is in the prompt: nothing to choose
    # Formal questions name what they build on ("the closed form of a_n"): the reader finds it.
    assert rows[("math", "flowstate")]["reader"]["recall"] == 1.0


def test_short_results_are_read_off_the_index_with_or_without_prefetch(
    store: Store, tmp_path: Path
) -> None:
    _, off = _arena(store, tmp_path / "off", configs=["formal_reasoning_math"], prefetch_states=0)
    _, on = _arena(store, tmp_path / "on", configs=["formal_reasoning_math"])  # the default
    a, b = (r["configs"]["formal_reasoning_math"]["flowstate"] for r in (off, on))
    assert a["sr"] == b["sr"] == 1.0
    # Seven subtasks, one call each: every earlier result is on its index line (`content:`),
    # so none waits a call to open it and the prefetch has nothing to open.
    assert a["spend"]["agent"]["calls"] == b["spend"]["agent"]["calls"] == 7


def test_one_step_access_and_act_saves_the_waiting_calls(store: Store, tmp_path: Path) -> None:
    _, now = _arena(store, tmp_path / "now", configs=["bundled_shopping"])
    _, waits = _arena(store, tmp_path / "waits", configs=["bundled_shopping"], one_step=False)
    a, b = (r["configs"]["bundled_shopping"]["flowstate"] for r in (now, waits))
    assert a["sr"] == b["sr"] == 1.0
    assert a["spend"]["agent"]["calls"] < b["spend"]["agent"]["calls"]


def test_tau_one_step_changes_nothing_every_access_precedes_a_call_that_needs_it(
    store: Store, tau_data: TauData
) -> None:
    config = TauConfig(domain="airline", strategies=["flowstate"], task_ids=PLANNED)
    now = TauRunner(config, tau_data, store).run()
    waits = TauRunner(config.model_copy(update={"one_step": False}), tau_data, store).run()
    assert [c.usage.calls for c in now] == [c.usage.calls for c in waits]
    assert all(c.score.success for c in now + waits)


def test_a_run_whose_database_goes_away_stops_and_resumes(
    neo4j_settings: Neo4jSettings, tau_data: TauData, tmp_path: Path
) -> None:
    config = TauConfig(domain="airline", strategies=["flowstate"], task_ids=PLANNED[:3])
    lost = Store.connect(neo4j_settings)
    runner = TauRunner(config, tau_data, lost, journal=Journal(tmp_path, "tau", config))
    runner.progress = lambda conv: lost.close()  # the server is gone after the first task
    with pytest.raises(StoreError, match="Driver closed"):
        runner.run()
    with Store.connect(neo4j_settings) as store:
        back = TauRunner(config, tau_data, store, journal=Journal(tmp_path, "tau", config))
        said: list[str] = []
        back.progress = lambda conv: said.append(conv.task_id)
        convs = back.run()
    assert [c.task_id for c in convs] == PLANNED[:3] and said == PLANNED[:3]
    assert all(c.score.success for c in convs)


def test_an_unreachable_database_fails_the_cli_in_one_line(tau_data: TauData, tmp_path) -> None:
    env = {"FLOWSTATE_NEO4J_URI": "bolt://127.0.0.1:1", "FLOWSTATE_NEO4J_RETRY_TIME_S": "1"}
    argv = ["--domain", "mock", "--data", str(tau_data.root), "--strategy", "flowstate"]
    result = CliRunner().invoke(tau, [*argv, "--out", str(tmp_path)], env=env)
    assert result.exit_code not in (0, None) and "Traceback" not in result.output
    assert "127.0.0.1:1" in result.output
