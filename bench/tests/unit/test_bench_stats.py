"""Percentiles and medians across runs, as the bench report uses them."""

from __future__ import annotations

import pytest

from flowstate_bench.stats import across_runs, percentile, summary


def test_percentile_interpolates_like_numpy() -> None:
    samples = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert percentile(samples, 50) == 3.0
    assert percentile(samples, 0) == 1.0 and percentile(samples, 100) == 5.0
    assert percentile(samples, 95) == pytest.approx(4.8)


def test_percentile_of_one_sample_is_that_sample() -> None:
    assert percentile([7.5], 99) == 7.5


def test_percentile_refuses_no_samples() -> None:
    with pytest.raises(ValueError):
        percentile([], 50)


def test_summary_has_the_report_keys() -> None:
    s = summary([float(i) for i in range(1, 101)])
    assert set(s) == {"p50", "p95", "p99", "mean", "max", "n"}
    assert s["p50"] == 50.5 and s["n"] == 100 and s["max"] == 100


def test_across_runs_takes_the_median_of_each_statistic() -> None:
    runs = [summary([1.0, 2.0]), summary([100.0, 200.0]), summary([3.0, 4.0])]
    out = across_runs(runs)
    assert out["p50"] == 3.5  # the middle run, not the mean pulled up by the noisy one
    assert out["runs"] == 3 and out["samples"] == 6
