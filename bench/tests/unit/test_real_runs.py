"""The path of a run with a real model, driven by scripted models through litellm: the spend
estimate and the question before it starts (refused without a terminal, never waiting), the
journal an interrupted run resumes from (twice), hostile replies, and the published tables'
form of the results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from flowstate.errors import UsageError
from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate_bench import realrun
from flowstate_bench.arena.cli import arena
from flowstate_bench.arena.data import ArenaData
from flowstate_bench.arena.runner import ArenaRunner, RunConfig
from flowstate_bench.harness import JOURNAL_FILE, Journal
from flowstate_bench.tau.cli import tau
from flowstate_bench.tau.data import TauData

FIXTURES = Path(__file__).parents[1] / "fixtures" / "memoryarena"
MATH = ["--config", "formal_reasoning_math", "--data", str(FIXTURES)]


def _answers(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A model that answers every formal question with the answer of the fixture's chain 2
    and fails the rest: scores differ by task, so a resumed report can be checked."""
    return {"type": "final", "answer": "$17$"}


@pytest.fixture
def model():
    script = ScriptedModel.policy("real-runs-agent", _answers)
    yield script
    unregister(script.name)


def _arena(args: list[str], out: Path, **kw: Any):
    return CliRunner().invoke(arena, [*MATH, "--out", str(out), *args], **kw)


def test_a_model_run_without_a_terminal_is_refused_before_any_call(model, tmp_path) -> None:
    result = _arena(["--agent", "llm", "--model", model.model, "--strategy", "full"], tmp_path)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert lines[0].startswith(f"Expected spend of this run on {model.model} (a floor:")
    assert "pass --yes to start it" in lines[-1]
    rows = [ln.split() for ln in lines if ln.startswith(("  formal", "  total"))]
    # One call per subtask of the fixture's 7, for the 2 tasks; no price for a scripted model.
    [group, total] = rows
    assert group[:4] == ["formal_reasoning_math", "full", "2", "7"] and group[5] == "-"
    assert total == ["total", "7", group[4], "-"] and int(group[4].replace(",", "")) > 0
    assert model.calls == [] and not (tmp_path / JOURNAL_FILE).exists()


def test_the_question_is_asked_on_a_terminal(model, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(realrun, "interactive", lambda: True)
    args = ["--agent", "llm", "--model", model.model, "--strategy", "full"]
    no = _arena(args, tmp_path / "no", input="n\n")
    assert no.exit_code == 2 and "not started" in no.output and model.calls == []
    yes = _arena(args, tmp_path / "yes", input="y\n")
    assert yes.exit_code == 0, yes.output
    assert "Start the run?" in yes.output and len(model.calls) == 7  # one per subtask


def test_the_estimate_is_the_scripted_oracle_scaled_and_priced(model, tmp_path) -> None:
    args = ["--agent", "llm", "--model", model.model, "--strategy", "full,bm25"]
    result = _arena([*args, "--price-model", "gpt-4o-mini", "--yes"], tmp_path)
    assert result.exit_code == 0, result.output
    lines = [ln.split() for ln in result.output.splitlines() if ln.startswith("  formal")]
    # Both tasks sampled (2 per group): the oracle's one call per subtask, 7 subtasks.
    assert [(ln[1], ln[2], ln[3]) for ln in lines] == [("full", "2", "7"), ("bm25", "2", "7")]
    assert all(float(ln[5]) >= 0 for ln in lines)  # priced as gpt-4o-mini, in dollars


def test_results_in_the_published_tables_form(model, tmp_path) -> None:
    args = ["--agent", "llm", "--model", model.model, "--strategy", "full", "--yes"]
    assert _arena(args, tmp_path).exit_code == 0
    text = (tmp_path / "arena_report.md").read_text()
    head = next(ln for ln in text.splitlines() if ln.startswith("| method |"))
    assert head.split(" | ")[1:4] == ["shop_sr", "shop_ps", "travel_sr"]
    ours = next(ln for ln in text.splitlines() if ln.startswith("| full (ours, agent llm"))
    assert "(published)" in text and ours.count("|") == head.count("|")


class Interrupt(KeyboardInterrupt):
    """What Ctrl-C raises, from inside the run."""


def _config(tmp: Path, **extra: Any) -> RunConfig:
    return RunConfig(
        configs=["formal_reasoning_math"],
        strategies=["full", "bm25"],
        agent="llm",
        model="flowstate-scripted/real-runs-agent",
        cache_dir=tmp / "cache",
        **extra,
    )


def _run(tmp: Path, stop_after: int | None = None, **extra: Any) -> tuple[list[Any], list[str]]:
    """A run that is interrupted after `stop_after` subtasks (None: runs to its end)."""
    said: list[str] = []

    def progress(text: str) -> None:
        said.append(text)
        if stop_after is not None and len(said) >= stop_after:
            raise Interrupt

    config = _config(tmp, **extra)
    runner = ArenaRunner(config, ArenaData(FIXTURES), journal=Journal(tmp, "arena", config))
    runner.say = progress
    try:
        return runner.run(), said
    except Interrupt:
        return [], said


def test_an_interrupted_run_resumes_twice_and_ends_with_every_unit_once(model, tmp_path) -> None:
    whole, _ = _run(tmp_path / "whole")
    assert len(whole) == 4  # 2 strategies x 2 tasks

    out = tmp_path / "resumed"
    first, said = _run(out, stop_after=9)  # full's 4 + 3 subtasks, then into bm25's task 1
    assert first == [] and len(said) == 9
    calls = len(model.calls)
    second, said = _run(out, stop_after=3)  # resumes at that task, cut again
    assert said[0].startswith("formal_reasoning_math bm25 task 1 subtask 1/4")
    third, said = _run(out)
    assert len(said) == 4 + 3  # bm25's two tasks: the cut one from its start
    assert len(model.calls) - calls == 3 + 4 + 3  # nothing finished was asked again
    assert [(r.strategy, r.task_id, r.passed) for r in third] == [
        (r.strategy, r.task_id, r.passed) for r in whole
    ]
    lines = (out / JOURNAL_FILE).read_text().splitlines()
    assert len(lines) == 1 + 4  # the header, then each unit once


def test_a_line_cut_by_a_crash_is_run_again_and_another_run_is_refused(model, tmp_path) -> None:
    _run(tmp_path, stop_after=7)  # task 1 of full done, task 2 cut
    journal = tmp_path / JOURNAL_FILE
    journal.write_text(journal.read_text()[:-40])  # the last line half written
    runs, said = _run(tmp_path)
    assert len(runs) == 4 and len(said) == 7 * 2  # the cut unit ran again, then the rest
    # Lines that hold no result (a stray number, another shape) rerun only their unit.
    first = json.loads(journal.read_text().splitlines()[-1])["unit"]  # bm25, task 2
    with journal.open("a") as f:
        f.write('5\n{"unit": 7}\n' + json.dumps({"unit": first, "result": {"k": 1}}) + "\n")
    runs, said = _run(tmp_path)
    assert len(runs) == 4 and len(said) == 3  # that unit (3 subtasks) again
    with pytest.raises(UsageError, match="holds another run"):
        _run(tmp_path, embedding_k=5)
    fresh = Journal(tmp_path, "arena", _config(tmp_path, embedding_k=5), fresh=True)
    assert fresh.load() == {}


def test_a_resume_onto_other_data_is_refused(model, tmp_path) -> None:
    copy = tmp_path / "data"
    rows = FIXTURES / "formal_reasoning_math" / "data.jsonl"
    (copy / "formal_reasoning_math").mkdir(parents=True)
    (copy / "formal_reasoning_math" / "data.jsonl").write_text(rows.read_text())
    args = ["--config", "formal_reasoning_math", "--agent", "oracle", "--strategy", "full"]
    out = ["--out", str(tmp_path / "out")]
    first = CliRunner().invoke(arena, [*args, "--data", str(copy), *out, "--tasks", "1"])
    assert first.exit_code == 0, first.output
    same = CliRunner().invoke(arena, [*args, "--data", str(copy), *out, "--tasks", "1"])
    assert same.exit_code == 0, same.output  # the same data: it resumes (nothing to run)
    reordered = "\n".join(reversed(rows.read_text().splitlines())) + "\n"
    (copy / "formal_reasoning_math" / "data.jsonl").write_text(reordered)
    other = CliRunner().invoke(arena, [*args, "--data", str(copy), *out, "--tasks", "1"])
    assert other.exit_code == 2 and "holds another run" in other.output


def test_a_second_process_running_into_the_same_folder_is_refused(model, tmp_path) -> None:
    import subprocess
    import sys

    config = _config(tmp_path)
    holder = subprocess.Popen(  # holds the folder's lock as a running run does, then waits
        [sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a+'); "
         "fcntl.flock(f, fcntl.LOCK_EX); f.write('pid 4242'); f.flush(); print('held', "
         "flush=True); time.sleep(60)", str(tmp_path / (JOURNAL_FILE + ".lock"))],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        runner = ArenaRunner(
            config, ArenaData(FIXTURES), journal=Journal(tmp_path, "arena", config)
        )
        with pytest.raises(UsageError, match="in use by a run of pid 4242"):
            runner.run()
    finally:
        holder.kill()
        holder.wait()
    runs = ArenaRunner(config, ArenaData(FIXTURES), journal=Journal(tmp_path, "arena", config))
    assert len(runs.run()) == 4  # the lock went with its process


HOSTILE = [
    "",
    "not json at all",
    '{"type": "final"',
    '{"type": "tool", "name": "reasoning", "arguments": "x"}',
    '{"type": "tool", "name": "no_such_tool", "arguments": {}}',
    "[" * 5_000,
    '{"type": "final", "answer": "\\ud800"}',
    "x" * 200_000,
]


def test_hostile_replies_are_scored_as_failures_and_the_run_finishes(tmp_path) -> None:
    n = iter(range(10**6))

    def hostile(messages: list[dict[str, Any]]) -> str:
        return HOSTILE[next(n) % len(HOSTILE)]

    script = ScriptedModel.policy("real-runs-hostile", hostile)
    try:
        args = ["--agent", "llm", "--model", script.model, "--strategy", "full,zipact", "--yes"]
        result = _arena(args, tmp_path)
    finally:
        unregister(script.name)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "arena_report.json").read_text())
    for m in report["configs"]["formal_reasoning_math"].values():
        assert m["sr"] == 0.0 and m["llm_calls"] > 7  # retried within the step budget


def test_tau_model_run_asks_and_resumes(tau_data: TauData, tmp_path) -> None:
    def agent(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"type": "final", "answer": "I cannot help with that."}

    script = ScriptedModel.policy("real-runs-tau", agent)
    base = ["--domain", "mock", "--data", str(tau_data.root), "--out", str(tmp_path)]
    args = [*base, "--agent", "llm", "--model", script.model, "--user", "scripted"]
    args += ["--strategy", "full", "--tasks", "2", "--trials", "2"]
    try:
        refused = CliRunner().invoke(tau, args)
        assert refused.exit_code == 2 and "pass --yes" in refused.output
        assert script.calls == []
        done = CliRunner().invoke(tau, [*args, "--yes"])
        assert done.exit_code == 0, done.output
        calls = len(script.calls)
        again = CliRunner().invoke(tau, [*args, "--yes"])  # every unit already in the journal
        assert again.exit_code == 0 and len(script.calls) == calls
    finally:
        unregister(script.name)
    text = (tmp_path / "tau_report.md").read_text()
    assert "| strategy | pass^1 | pass^2 |" in text
    report = json.loads((tmp_path / "tau_report.json").read_text())
    assert len(report["conversations"]) == 4
