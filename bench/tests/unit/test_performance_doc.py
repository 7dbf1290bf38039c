"""The token tables of docs/performance.md are the committed token suite report's
(bench/results/tokens.json), as `flowstate_bench.perf_doc` writes them."""

from __future__ import annotations

import json
from pathlib import Path

from flowstate_bench import perf_doc

ROOT = Path(__file__).resolve().parents[3]
REPORT = ROOT / "bench" / "results" / "tokens.json"
PAGE = ROOT / "docs" / "performance.md"
AGAIN = "flowstate bench tokens --out bench/results --doc docs/performance.md"


def test_the_performance_page_shows_the_committed_reports_tables() -> None:
    generated = perf_doc.tables(REPORT)
    shown = perf_doc.in_page(PAGE.read_text(encoding="utf-8"))
    assert set(shown) == set(generated)  # every table has its place in the page
    for name, text in generated.items():
        assert shown[name] == text, f"table {name!r} differs from the report: run `{AGAIN}`"


def test_the_report_is_the_token_suites_at_every_depth() -> None:
    report = json.loads(REPORT.read_text(encoding="utf-8"))
    assert report["meta"]["command"] == "flowstate bench tokens"
    assert list(report["tokens"]["by_depth"]) == ["10", "25", "50", "100"]


def test_a_figure_changed_in_the_report_shows_in_its_table(tmp_path: Path) -> None:
    report = json.loads(REPORT.read_text(encoding="utf-8"))
    report["tokens"]["by_depth"]["50"]["flowstate"]["tokens"] += 1_000
    changed = tmp_path / "tokens.json"
    changed.write_text(json.dumps(report), encoding="utf-8")
    before, after = perf_doc.tables(REPORT), perf_doc.tables(changed)
    assert [n for n in before if before[n] != after[n]] == ["suite"]
    page = perf_doc.render(PAGE.read_text(encoding="utf-8"), after)
    assert perf_doc.in_page(page) == after
