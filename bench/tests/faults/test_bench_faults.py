"""`flowstate bench faults` end to end at tiny counts, without the spare-server parts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from flowstate_bench.faults import faults

pytestmark = pytest.mark.neo4j


def test_faults_command_writes_the_counts(neo4j_settings, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("FLOWSTATE_NEO4J_URI", neo4j_settings.uri)  # never a surprise server
    args = ["--cases", "30", "--full-cases", "2", "--agents", "3", "--requests", "2"]
    args += ["--writers", "3", "--writer-requests", "3"]
    done = CliRunner().invoke(faults, [*args, "--no-spare", "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    report = json.loads((tmp_path / "faults.json").read_text())
    totals = report["totals"]
    assert totals["cases_tried"] == 32 and totals["faults_injected"] == 0
    assert totals["states_checked"] >= 3 * 2 * 2
    assert (totals["losses_found"], totals["crossed_states"], totals["failures"]) == (0, 0, 0)
    assert totals["rejections_explained"] > 0
    # the edge cases, one round
    assert totals["hostile_tool_outputs"] == totals["hostile_outputs_bounded"] == 11
    assert totals["false_interruptions_on_resume"] == 0
    assert totals["hostile_replies_refused"] == 11 and totals["hostile_replies_that_escaped"] == 0
    assert totals["dangling_commits"] == 3 and totals["dangling_references_dropped"] >= 3
    assert totals["requests_stuck_on_dangling"] == 0
    assert totals["crashes_at_final_commit"] == 1
    assert totals["model_calls_repeated_after_crash"] == 0
    assert totals["writer_requests_committed"] == 9 and totals["writer_requests_failed"] == 0
    assert totals["writer_ids_repeated_or_skipped"] == 0
    assert totals["writer_requests_left_open"] == 0
    assert "cases_tried" in done.output and "faults.json" in done.output
