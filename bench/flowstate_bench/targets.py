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
    ("step_reveal_rtt", "step_reveal_ms", "bolt_rtt_ms", 5,
     "critical path of a step with a reveal of 8 states"),
    ("commit_write_tx", "commit_ms", "write_tx_ms", 10,
     "commit of 50 states, 150 relations, 20 observations"),
)  # fmt: skip
UNITS = {"bolt_rtt_ms": "a bare RETURN 1 round trip", "write_tx_ms": "a single-node write tx"}


# The reveal step is judged at 10k states as well (the size `--quick` reaches).
ALSO_AT = {"step_reveal_rtt": "10k"}


def engine_targets(engine: dict[str, Any]) -> list[dict[str, Any]]:
    """Each probe's p50 as a multiple of a unit measured in the same run (these machines are
    noisy: a ratio taken side by side holds where absolute milliseconds do not), at 100k
    states, or at the largest size run when 100k was not; some at 10k too (`ALSO_AT`)."""
    label, size = (
        (STEP_SIZE, engine[STEP_SIZE]) if STEP_SIZE in engine else (_largest(engine) or ("", {}))
    )
    out = []
    for name, probe, unit, most, what in RATIO_GOALS:
        goal = f"{what} p50 <= {most}x {UNITS[unit]} ({STEP_SIZE} states)"
        out.append(_ratio(name, goal, probe, unit, most, label, size))
        also = ALSO_AT.get(name)
        if also:
            goal = f"{what} p50 <= {most}x {UNITS[unit]} ({also} states)"
            out.append(_ratio(f"{name}_{also}", goal, probe, unit, most, also, engine.get(also)))
    return out


def _ratio(
    name: str, goal: str, probe: str, unit: str, most: float, label: str, size: Any
) -> dict[str, Any]:
    if not size or probe not in size or unit not in size:
        return _target(name, goal, None, "")
    p50, base = size[probe]["p50"], size[unit]["p50"]
    ratio = p50 / base if base else float("inf")
    p95 = size[probe].get("p95")
    spread = f" (p95 {p95} ms)" if p95 is not None else ""
    figure = f"{ratio:.1f}x: {p50} ms{spread} against {base} ms at {label}"
    return _target(name, goal, ratio <= most, figure)


# At depth 50, recall 1.0, tokens (prompt plus completion) as a share of full context's.
DEPTH_RATIO = {"flowstate": 0.15, "flowstate_reader": 0.18}
FIXED_PRICE = 450  # tokens of a call that do not depend on memory or request
DEMO_RATIO = 0.7  # FlowState's whole bill over the plain tool-calling agent's
FIRST_REQUEST_RATIO = 1.3
SWEPT = ("bm25", "embedding", "recency_window")


def _reached(block: dict[str, Any], depth: str) -> dict[str, dict[str, Any]]:
    """The strategies that reach recall 1.0 at `depth`, by their name in the cache table
    (`bm25@16` for a swept one at the k it needs), with their recall-matched figures."""
    matched = block.get("recall_matched", {}).get(depth, {}).get("matched", {})
    out = {}
    for name, m in matched.items():
        if m["reached"]:
            out[f"{name}@{m['k']}" if name in SWEPT else name] = m
    return out


def token_targets(tokens: dict[str, Any]) -> list[dict[str, Any]]:
    depths = tokens.get("by_depth", {})
    out = [
        *[
            _depth_50(depths.get("50", {}).get(name), name, most)
            for name, most in DEPTH_RATIO.items()
        ],
        _versus(tokens, "standard scenario, depth >= 50", 50, ("recency_window",)),
        _versus(tokens.get("far_back") or {}, "far-back variant, depth >= 25", 25, SWEPT),
        *[_cached(tokens, rate) for rate in ("10%", "50%", "breakpoints")],
        _fixed_price(depths),
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


def _depth_50(at50: dict[str, Any] | None, name: str, most: float) -> dict[str, Any]:
    who = "FlowState" if name == "flowstate" else "FlowState's reader"
    goal = (f"standard scenario, depth 50: {who} <= {most:.0%} of full context in tokens "
            "(prompt + completion), recall 1.0")  # fmt: skip
    target = "tokens_depth_50" + ("" if name == "flowstate" else "_reader")
    if at50 is None:
        return _target(target, goal, None, "")
    ok = at50["ratio_to_full_context"] <= most and at50["recall"] == 1
    figure = (f"{at50['ratio_to_full_context']:.1%} of full context ({at50['tokens']:,.0f} "
              f"tokens: {at50['prompt_tokens']:,.0f} prompt + {at50['completion_tokens']:,.0f} "
              f"completion), recall {at50['recall']}")  # fmt: skip
    return _target(target, goal, ok, figure)


def _versus(block: dict[str, Any], where: str, from_depth: int, rivals: tuple[str, ...]) -> Any:
    """FlowState at recall 1.0 below each rival at recall 1.0 (a rival that never reaches it
    loses), at every depth from `from_depth`."""
    goal = f"{where}: FlowState at recall 1.0 below {', '.join(rivals)} at recall 1.0"
    depths = [d for d in block.get("recall_matched", {}) if int(d) >= from_depth]
    if not depths:
        return _target(f"versus_{where}", goal, None, "")
    ok, notes = True, []
    for d in depths:
        matched = block["recall_matched"][d]["matched"]
        fs = matched["flowstate"]
        ok &= fs["reached"]
        for rival in rivals:
            r = matched[rival]
            if r["reached"]:
                ok &= fs["tokens"] < r["tokens"]
                notes.append(f"{d}: {fs['tokens']:,.0f} vs {rival} {r['tokens']:,.0f}")
            else:
                notes.append(f"{d}: {rival} never reaches 1.0 (best {r['recall']:.2f})")
    return _target(f"versus_{where}", goal, ok, "; ".join(notes))


def _cached(tokens: dict[str, Any], rate: str) -> dict[str, Any]:
    """FlowState's effective tokens under a cache model (`rate`: the automatic cache's read
    rate, or "breakpoints") against every strategy that reaches recall 1.0."""
    model = ("breakpoint cache (writes 1.25x, reads 10%)" if rate == "breakpoints"
             else f"cached input at {rate}")  # fmt: skip
    goal = (
        f"{model}, the providers' rules: FlowState at or below every strategy that reaches "
        "recall 1.0, depth >= 50, both variants"
    )
    ok, worst, seen = True, "", False
    for label, block in (("standard", tokens), ("far-back", tokens.get("far_back") or {})):
        for d, per in (block.get("cache") or {}).items():
            if int(d) < 50 or "flowstate" not in per:
                continue
            seen = True
            mine = _effective(per["flowstate"], rate)
            for rival in _reached(block, d):
                if rival == "flowstate" or rival not in per:
                    continue
                theirs = _effective(per[rival], rate)
                if mine > theirs:
                    ok = False
                    worst += f"{label} {d}: {mine:,.0f} vs {rival} {theirs:,.0f}; "
    figure = worst or "FlowState lowest of those reaching recall 1.0 at every depth >= 50"
    return _target(f"cache_{rate}", goal, ok if seen else None, figure if seen else "")


def _effective(figures: dict[str, Any], rate: str) -> float:
    if rate == "breakpoints":
        return float(figures["breakpoint_tokens"])
    return float(figures["effective_tokens"][rate])


def _fixed_price(depths: dict[str, Any]) -> dict[str, Any]:
    goal = f"a call's fixed price (protocol, reply format, tools, framing) <= {FIXED_PRICE} tokens"
    kinds = [
        (d, kind, f["fixed_price"])
        for d, figures in depths.items()
        for kind, f in (figures["flowstate"].get("call_kinds") or {}).items()
    ]
    if not kinds:
        return _target("fixed_price", goal, None, "")
    worst = max(kinds, key=lambda k: k[2])
    return _target(
        "fixed_price",
        goal,
        worst[2] <= FIXED_PRICE,
        f"at most {worst[2]:,.0f} tokens (depth {worst[0]}, {worst[1]} calls)",
    )


def demo_targets(tokens: dict[str, Any]) -> list[dict[str, Any]]:
    demo = tokens.get("demo")
    goal = (
        f"the demo's whole bill (prompt plus completion) <= {DEMO_RATIO}x the plain "
        "tool-calling agent's, same answers"
    )
    first_goal = f"the first request's bill within {FIRST_REQUEST_RATIO}x of the plain agent's"
    if not demo:
        return [
            _target("demo_ratio", goal, None, ""),
            _target("first_request", first_goal, None, ""),
        ]
    first, fs, plain = demo["first_request_ratio"], demo["flowstate"], demo["plain"]
    return [
        _target(
            "demo_ratio",
            goal,
            demo["ratio"] <= DEMO_RATIO and demo["same_answer"],
            f"{demo['ratio']:.2f}x ({fs['tokens']:,} vs {plain['tokens']:,} tokens, "
            f"{fs['calls']} vs {plain['calls']} calls); final total "
            f"{'reached' if demo['same_answer'] else 'NOT reached'}; with cached input at 10%: "
            f"{demo['ratio_cached_at_10%']:.2f}x",
        ),
        _target(
            "first_request",
            first_goal,
            first <= FIRST_REQUEST_RATIO,
            f"demo {first:.2f}x; bench scenario {tokens.get('first_request_ratio', 0):.2f}x",
        ),
    ]


SCALE_REFERENCE, SCALE_SIZE, SCALE_RATIO = "10k", "1M", 1.5
SCALED = {"agent_start": "index_fetch_render_ms", "step_overhead": "step_ms"}


def scale(engine: dict[str, Any], size: str = SCALE_SIZE) -> dict[str, Any] | None:
    """Agent start and step overhead (p50) at 1M states against 10k, from the same run.

    >>> scale({"10k": {"index_fetch_render_ms": {"p50": 100.0}, "step_ms": {"p50": 10.0}},
    ...        "1M": {"index_fetch_render_ms": {"p50": 300.0}, "step_ms": {"p50": 12.0}}})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'reference': '10k', 'size': '1M', 'goal_ratio': 1.5,
     'agent_start': {'10k_ms': 100.0, '1M_ms': 300.0, 'ratio': 3.0},
     'step_overhead': {'10k_ms': 10.0, '1M_ms': 12.0, 'ratio': 1.2}}
    """
    ref, big = engine.get(SCALE_REFERENCE), engine.get(size)
    if not ref or not big or SCALED["agent_start"] not in big:
        return None
    out: dict[str, Any] = {"reference": SCALE_REFERENCE, "size": size}
    out["goal_ratio"] = SCALE_RATIO
    for name, key in SCALED.items():
        small, large = ref[key]["p50"], big[key]["p50"]
        out[name] = {
            f"{SCALE_REFERENCE}_ms": small,
            f"{size}_ms": large,
            "ratio": round(large / small, 2),
        }
    return out


def scale_targets(
    engine: dict[str, Any], unfinished: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Judged at 1M; when the 1M build ran out of time, not measured, with the ratios at the
    size it reached as the figure."""
    scaled = scale(engine)
    big = (unfinished or {}).get(SCALE_SIZE)
    partial = scale({**engine, "reached": big}, "reached") if big else None
    why = "run with --million"
    if big:
        why = f"the {SCALE_SIZE} build reached {big['states']:,} states: {big['reason']}"
    out = []
    for name, what in (("agent_start", "agent start (index load + render)"),
                       ("step_overhead", "step overhead")):  # fmt: skip
        goal = f"{what} at 1M states within {SCALE_RATIO}x of 10k (p50, same run)"
        if scaled is None:
            there = ""
            if partial and big:
                f = partial[name]
                there = (f"; at the {big['states']:,} states reached: {f['ratio']:.2f}x "
                         f"({f['reached_ms']} ms; {f['10k_ms']} ms at 10k)")  # fmt: skip
            out.append(_target(f"scale_{name}", goal, None, why + there))
            continue
        f = scaled[name]
        out.append(
            _target(
                f"scale_{name}",
                goal,
                f["ratio"] <= SCALE_RATIO,
                f"{f['ratio']:.2f}x ({f['1M_ms']} ms at 1M, {f['10k_ms']} ms at 10k)",
            )
        )
    return out


def cli_targets(cli: dict[str, Any]) -> list[dict[str, Any]]:
    goal = '`flowstate --help` start-up within 2x of `python -c "import click"` (medians)'
    if not cli:
        return [_target("cli_help_startup", goal, None, "")]
    ms = cli["median_ms"]
    click = ms["python -c 'import click'"]
    extra = ", ".join(f"{k} {v:g} ms" for k, v in list(cli["beyond_click_ms"].items())[:3])
    return [
        _target(
            "cli_help_startup",
            goal,
            cli["ratio"] <= cli["goal_ratio"],
            f"{cli['ratio']:.2f}x ({ms['flowstate --help']:g} vs "
            f"{click:g} ms, {cli['runs']} interleaved runs, load "
            f"average {cli['load_average'][0]:g}); `flowstate index --help`, which lists no "
            f"plugins, {cli['index_help_ratio']:.2f}x. Beyond click: {extra}",
        )
    ]


def judge(report: dict[str, Any]) -> list[dict[str, Any]]:
    return (
        engine_targets(report.get("engine", {}))
        + scale_targets(report.get("engine", {}), report.get("unfinished"))
        + cli_targets(report.get("cli", {}))
        + token_targets(report.get("tokens", {}))
    )
