"""The goals the report is read against. They are goals, not assertions: a missed one is
reported as missed, next to the figure it was judged on.

>>> judge({"engine": {}, "tokens": {"by_depth": {}}})[0]["status"]
'not measured'
"""

from __future__ import annotations

from typing import Any

MET, MISSED, NOT_MEASURED = "met", "missed", "not measured"
STEP_SIZE = "100k"


def _target(name: str, goal: str, ok: bool | None, figure: str) -> dict[str, Any]:
    status = NOT_MEASURED if ok is None else (MET if ok else MISSED)
    return {"target": name, "goal": goal, "status": status, "figure": figure}


def _largest(engine: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    if not engine:
        return None
    return max(engine.items(), key=lambda kv: kv[1]["states"])


# (target, probe, unit probe, most multiples of the unit, what is judged)
RATIO_GOALS = (
    ("step_plain_rtt", "step_plain_ms", "bolt_rtt_ms", 3,
     "critical path of a step without a reveal"),
    ("step_reveal_rtt", "step_reveal_ms", "bolt_rtt_ms", 6,
     "critical path of a step with a reveal of 8 states"),
    ("commit_write_tx", "commit_ms", "write_tx_ms", 10,
     "commit of 50 states, 150 relations, 20 observations"),
)  # fmt: skip
UNITS = {"bolt_rtt_ms": "a bare RETURN 1 round trip", "write_tx_ms": "a single-node write tx"}


def engine_targets(engine: dict[str, Any]) -> list[dict[str, Any]]:
    """Each probe's p50 as a multiple of a unit measured in the same run (these machines are
    noisy: a ratio taken side by side holds where absolute milliseconds do not), at 100k
    states, or at the largest size run when 100k was not."""
    label, size = (
        (STEP_SIZE, engine[STEP_SIZE]) if STEP_SIZE in engine else (_largest(engine) or ("", {}))
    )
    out = []
    for name, probe, unit, most, what in RATIO_GOALS:
        goal = f"{what} p50 <= {most}x {UNITS[unit]} ({STEP_SIZE} states)"
        if probe not in size or unit not in size:
            out.append(_target(name, goal, None, ""))
            continue
        p50, base = size[probe]["p50"], size[unit]["p50"]
        ratio = p50 / base if base else float("inf")
        out.append(
            _target(
                name,
                goal,
                ratio <= most,
                f"{ratio:.1f}x: {p50} ms against {base} ms at {label}",
            )
        )
    return out


def token_targets(tokens: dict[str, Any]) -> list[dict[str, Any]]:
    depths = tokens.get("by_depth", {})
    at50 = depths.get("50", {}).get("flowstate")
    out = [
        _target(
            "tokens_depth_50",
            "FlowState prompt tokens at depth 50 <= 25% of full context, recall 1.0",
            None if at50 is None else at50["ratio_to_full_context"] <= 0.25 and at50["recall"] == 1,
            ""
            if at50 is None
            else f"{at50['ratio_to_full_context']:.1%} of full context (last request "
            f"{at50['last_request_ratio']:.1%}), recall {at50['recall']}",
        )
    ]
    fs = [d["flowstate"] for d in depths.values()]
    within = all(f["index_tokens_max"] <= f["index_budget"] for f in fs) if fs else None
    worst = max((f["index_tokens_max"] for f in fs), default=0)
    budget = fs[0]["index_budget"] if fs else 0
    out.append(
        _target(
            "index_within_budget",
            "the index stays within its token budget at every depth",
            within,
            f"largest index {worst} of {budget} tokens" if fs else "",
        )
    )
    writes = max((f["memory_write_calls"] for f in fs), default=0)
    extra = max((f["extra_llm_calls"] for f in fs), default=0)
    out.append(
        _target(
            "no_extra_calls",
            "zero extra LLM calls to write memory",
            (writes == 0) if fs else None,
            f"{writes} write-only calls per request; {extra} extra calls per request in all "
            "(steps that open collapsed requests)"
            if fs
            else "",
        )
    )
    return out + demo_targets(tokens)


DEMO_SAVING = 0.40
FIRST_REQUEST_RATIO = 1.5


def demo_targets(tokens: dict[str, Any]) -> list[dict[str, Any]]:
    demo = tokens.get("demo")
    if not demo:
        return [
            _target("demo_saving", "the demo saves >= 40% of prompt tokens", None, ""),
            _target("first_request", "the first request within 1.5x of full history", None, ""),
        ]
    first = demo["first_request_ratio"]
    parts = demo["parts"]
    fixed = parts["protocol"] + parts["tools"]
    return [
        _target(
            "demo_saving",
            "the demo saves >= 40% of prompt tokens over its eight requests, same answers",
            demo["saving"] >= DEMO_SAVING and demo["same_answer"],
            f"{demo['saving']:.1%} ({demo['prompt_tokens']:,} vs {demo['full_history_tokens']:,}"
            f" tokens, {demo['calls']} calls); final total "
            f"{'reached' if demo['same_answer'] else 'NOT reached'}; against a replay agent that "
            f"never waits for memory and replays only its actions: {demo['lean_saving']:.1%}",
        ),
        _target(
            "first_request",
            "the first request's prompt within 1.5x of full history",
            first <= FIRST_REQUEST_RATIO,
            f"demo {first:.2f}x; bench scenario {tokens.get('first_request_ratio', 0):.2f}x. "
            f"Protocol and tools are {fixed / demo['prompt_tokens']:.0%} of the demo's tokens: "
            "a fixed price per call that a first request, with no history to save, cannot "
            "earn back",
        ),
    ]


def judge(report: dict[str, Any]) -> list[dict[str, Any]]:
    return engine_targets(report.get("engine", {})) + token_targets(report.get("tokens", {}))
