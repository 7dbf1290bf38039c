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
    args += ["--many-writers", "4", "--many-requests", "3", "--writer-kills", "0"]
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
    # many writers through every shell, none killed, no restart (--no-spare)
    assert totals["many_writers_x_requests"] == totals["many_writer_requests_committed"] == 12
    assert (totals["many_writer_kills"], totals["many_writer_neo4j_restarts"]) == (0, 0)
    assert totals["many_writer_requests_lost"] == totals["many_writer_requests_duplicated"] == 0
    assert totals["many_writer_namespace_busy"] == totals["many_writer_failed"] == 0
    assert totals["many_writer_ids_unexplained"] == totals["many_writer_ids_discarded"] == 0
    assert totals["many_writer_guard_decisions"] >= 3
    assert totals["many_writer_guard_inconsistent"] == 0
    assert totals["many_writer_index_equals_rebuild"] == 1
    assert totals["many_writer_own_indexes_equal_rebuild"] == 4
    assert report["many_writers"]["shells"] == {"sync": 1, "async": 1, "session": 1, "mcp": 1}
    assert "cases_tried" in done.output and "faults.json" in done.output
