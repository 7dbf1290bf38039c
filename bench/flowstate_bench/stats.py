"""Percentiles of timing samples, and medians across repeated runs.

Each run of a probe gives many samples; a run is summarised by its percentiles, and the
figure reported is the median of those percentiles across runs, so one noisy run (a GC
pause, a checkpoint of the database) cannot move the headline number on its own.

>>> summary([1.0, 2.0, 3.0, 4.0])["p50"]
2.5
>>> across_runs([{"p50": 1.0, "n": 3}, {"p50": 3.0, "n": 3}, {"p50": 2.0, "n": 3}])["p50"]
2.0
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

PERCENTILES = (50, 95, 99)


def percentile(samples: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary(samples: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99, mean, max and count of one run's samples (rounded for the report)."""
    out = {f"p{q}": round(percentile(samples, q), 3) for q in PERCENTILES}
    out["mean"] = round(statistics.fmean(samples), 3)
    out["max"] = round(max(samples), 3)
    out["n"] = len(samples)
    return out


def across_runs(runs: Sequence[dict[str, float]]) -> dict[str, Any]:
    """The median of each statistic across runs, plus how many runs and samples it rests on."""
    if not runs:
        raise ValueError("no runs")
    keys = [k for k in runs[0] if k != "n"]
    out: dict[str, Any] = {k: round(statistics.median(r[k] for r in runs), 3) for k in keys}
    out["runs"] = len(runs)
    out["samples"] = sum(int(r["n"]) for r in runs)
    return out


def timed_ms(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Milliseconds `fn()` took, and what it returned."""
    start = time.perf_counter()
    value = fn()
    return (time.perf_counter() - start) * 1e3, value


def sample_ms(fn: Callable[[], Any], n: int) -> list[float]:
    return [timed_ms(fn)[0] for _ in range(n)]
