"""Aggregates per strategy, the results table (as in the tau-bench papers: pass^1..k, DB and
action accuracy, tokens per task) and the JSON report."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from flowstate_bench.tau.runner import Conversation, RunConfig
from flowstate_bench.tau.scoring import pass_hat_k

REPORT_FILE = "tau_report.json"


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def strategy_summary(convs: Sequence[Conversation], trials: int) -> dict[str, Any]:
    db = [c.score.db_match for c in convs if c.db_scored]
    actions = [c.score.action_accuracy for c in convs if c.score.action_accuracy is not None]
    per_task: dict[str, list[bool]] = defaultdict(list)
    for c in convs:
        per_task[c.task_id].append(c.score.success)
    outcomes = [(sum(v), len(v)) for v in per_task.values()]
    prompt = sum(c.usage.prompt_tokens for c in convs)
    completion = sum(c.usage.completion_tokens for c in convs)
    return {
        "conversations": len(convs),
        "db_accuracy": _mean([float(x) for x in db]),
        "db_matched": sum(db),
        "db_scored": len(db),
        "action_accuracy": _mean(actions),
        "reward": _mean([c.score.reward for c in convs]),
        "pass_hat_k": {str(k): pass_hat_k(outcomes, k) for k in range(1, trials + 1)},
        "tokens": {
            "prompt": prompt,
            "completion": completion,
            "total": prompt + completion,
            "per_task": (prompt + completion) / len(convs) if convs else 0,
        },
        "llm_calls": sum(c.usage.calls for c in convs),
        "extra_calls": sum(c.extra_calls for c in convs),
        "user_tokens": sum(c.user_usage.total_tokens for c in convs),
        "unjudged": dict(Counter(b for c in convs for b in c.score.unjudged)),
        "ended": dict(Counter(c.ended for c in convs)),
    }


def build_report(config: RunConfig, convs: Sequence[Conversation]) -> dict[str, Any]:
    """The JSON report: top-level metric keys map each strategy to its value."""
    by_strategy = {
        s: strategy_summary([c for c in convs if c.strategy == s], config.trials)
        for s in config.strategies
    }
    metric = lambda key: {s: v[key] for s, v in by_strategy.items()}  # noqa: E731
    return {
        "domain": config.domain,
        "agent": config.agent,
        "model": config.model,
        "user": config.user_kind,
        "trials": config.trials,
        "tasks": len({c.task_id for c in convs}),
        "db_accuracy": metric("db_accuracy"),
        "action_accuracy": metric("action_accuracy"),
        "pass_hat_k": metric("pass_hat_k"),
        "tokens": metric("tokens"),
        "strategies": by_strategy,
        "config": config.model_dump(mode="json"),
        "conversations": [_row(c) for c in convs],
    }


def _row(c: Conversation) -> dict[str, Any]:
    s = c.score
    return {
        "task": c.task_id,
        "strategy": c.strategy,
        "trial": c.trial,
        "reward": s.reward,
        "db_match": s.db_match,
        "actions": f"{s.actions_matched}/{s.actions_total}",
        "communicated": f"{s.communicated}/{s.communicate_total}",
        "unjudged": s.unjudged,
        "turns": c.turns,
        "ended": c.ended,
        "tokens": c.usage.total_tokens,
        "calls": [{"name": r.name, "arguments": r.arguments, "error": r.error} for r in c.calls],
    }


def write_report(report: dict[str, Any], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / REPORT_FILE
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    return path


def results_table(report: dict[str, Any]) -> Table:
    trials = report["trials"]
    title = f"tau-bench {report['domain']}: {report['agent']} agent, {report['tasks']} tasks"
    table = Table(title=title)
    table.add_column("strategy", no_wrap=True)
    for k in range(1, trials + 1):
        table.add_column(f"pass^{k}", justify="right", no_wrap=True)
    for name in ("DB acc", "act acc", "DB ok", "tok/task", "calls", "extra"):
        table.add_column(name, justify="right", no_wrap=True)
    for strategy, s in report["strategies"].items():
        table.add_row(
            strategy,
            *(_pct(s["pass_hat_k"][str(k)]) for k in range(1, trials + 1)),
            _pct(s["db_accuracy"]),
            _pct(s["action_accuracy"]),
            f"{s['db_matched']}/{s['db_scored']}",
            f"{s['tokens']['per_task']:,.0f}",
            str(s["llm_calls"]),
            str(s["extra_calls"]),
        )
    return table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"
