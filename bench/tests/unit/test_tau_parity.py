"""Parity with the original tau2-bench environments: every recorded episode of the data
folder's `tau2-parity/` replayed here, every output (byte for byte), error flag and changed
record compared. No Neo4j; a few seconds."""

from __future__ import annotations

import copy
import json

import pytest
from data_folders import missing

from flowstate_bench.tau.data import TauData
from flowstate_bench.tau.env import EnvOptions
from flowstate_bench.tau.parity import check_domain, episodes, fixture_json, replay_episode

RECORDED = {"airline": (288, 1524), "retail": (483, 2353)}  # episodes, calls


@pytest.fixture(scope="module")
def data(tau_data: TauData) -> TauData:
    if not (tau_data.root / "tau2-parity").is_dir():
        missing(f"{tau_data.root} has no tau2-parity/ fixtures", "set FLOWSTATE_TAU_DATA")
    return tau_data


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_every_recorded_episode_replays_exactly(data: TauData, domain: str) -> None:
    result = check_domain(data, domain)
    assert (result.episodes, result.calls) == RECORDED[domain]
    assert [m.line() for m in result.mismatches[:20]] == []
    assert result.matching_episodes == result.episodes


def test_the_fixed_multi_item_modify_departs_exactly_where_the_original_bug_shows(
    data: TauData,
) -> None:
    result = check_domain(data, "retail", EnvOptions(fix_multi_item_modify=True))
    departing = {m.episode for m in result.mismatches}
    tasks = {e.split(":")[2] for e in departing if not e.startswith("probe:")}
    assert tasks == {"20", "21", "36", "37", "100"}  # the tasks the issue names
    assert {m.call for m in result.mismatches} != {None}  # outputs differ, not only records
    assert all(
        m.what.startswith("changed orders/") or m.what == "output" for m in result.mismatches
    )


def test_the_replay_reports_a_wrong_output_flag_or_record(data: TauData) -> None:
    [episode] = [e for e in episodes(data, "airline") if e["id"] == "ref:airline:8"]
    assert replay_episode(data, episode) == []
    wrong = copy.deepcopy(episode)
    wrong["calls"][0]["output"] += " "
    wrong["calls"][1]["error"] = not wrong["calls"][1]["error"]
    table, rows = next(iter(wrong["changed"].items()))
    key = next(iter(rows))
    rows[key] = rows[key].replace('"', "'", 1)
    wrong["changed"]["users"]["nobody"] = "{}"
    found = {(m.call, m.what) for m in replay_episode(data, wrong)}
    assert found == {
        (0, "output"),
        (1, "error"),
        (None, f"changed {table}/{key}"),
        (None, "changed users/nobody"),
    }


def test_the_fixture_form_drops_nulls_and_writes_whole_floats_as_integers() -> None:
    record = {"amount": 274.0, "status": None, "price": 0.05, "bags": "2", "ok": True}
    assert json.loads(fixture_json(record)) == {
        "amount": 274,
        "price": 0.05,
        "bags": "2",
        "ok": True,
    }
