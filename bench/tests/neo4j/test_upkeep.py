"""`flowstate bench upkeep` against the real Mem0 and Graphiti (the bench's `upkeep` extra) on
the demo's first two requests: each write's counted bill equals an independent count of the
bytes that reached the endpoint, every fact FlowState stored was stored by each system, and
FlowState's upkeep is its memory lines and the protocol's writing part, counted apart.

The independent count parses each request's bytes as they came off the socket and counts them
with litellm's accounting and litellm's own copy of the BPE file (tests/litellm_boundary.py),
not with flowstate.tokens."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from data_folders import missing

from flowstate.engine.protocol import protocol
from flowstate.rules.limits import Limits
from flowstate.settings import Neo4jSettings
from flowstate.store import Store
from flowstate_bench.upkeep.endpoint import BILLED_AS
from flowstate_bench.upkeep.run import SystemRun, missing_systems, run_upkeep
from tests.litellm_boundary import Received, prompt_tokens, text_tokens

pytestmark = pytest.mark.neo4j

REQUESTS = 2


@pytest.fixture(autouse=True, scope="module")
def upkeep_extra() -> None:
    """The real systems: skipped without them, except in CI, which installs them."""
    if absent := missing_systems():
        missing(f"the bench's upkeep extra is not installed ({', '.join(absent)})",
                "pip install -e './bench[upkeep]'")  # fmt: skip


@pytest.fixture(scope="module")
def report(upkeep_extra: None, store: Store, neo4j_settings: Neo4jSettings):  # noqa: ANN201
    return run_upkeep(store, neo4j_settings, REQUESTS)


def independent_bill(run: SystemRun, label: str) -> tuple[int, int, int, int]:
    """(prompt, completion, model calls, embedding tokens) of one write, from the wire bytes."""
    replies = iter(r.reply for r in run.received if r.label == label and r.route != "embeddings")
    prompt = completion = calls = embedded = 0
    for at, path, raw in run.wire:
        if at != label:
            continue
        body = json.loads(raw)
        if path.endswith("/embeddings"):
            texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
            embedded += sum(text_tokens(t, BILLED_AS) for t in texts)
            continue
        if path.endswith("/responses"):
            messages, schema = body["input"], (body.get("text") or {}).get("format")
        else:
            messages, schema = body["messages"], body.get("response_format")
        optional = {"response_format": schema, "tools": body.get("tools")}
        prompt += prompt_tokens(Received(body["model"], messages, optional), BILLED_AS)
        completion += text_tokens(next(replies), BILLED_AS)
        calls += 1
    return prompt, completion, calls, embedded


@pytest.mark.parametrize("system", ["mem0", "graphiti"])
def test_each_write_is_billed_as_it_reached_the_endpoint(report, system: str) -> None:  # noqa: ANN001
    run = next(r for r in report.runs if r.system == system)
    assert len(run.bills) == REQUESTS and not run.errors
    for write, bill in zip(report.writes, run.bills, strict=True):
        prompt, completion, calls, embedded = independent_bill(run, write.request_id)
        assert calls >= 1 and prompt > 1000  # each system sends its own long prompts
        assert (bill.prompt_tokens, bill.completion_tokens) == (prompt, completion)
        assert (bill.calls, bill.embedding_tokens) == (calls, embedded)
    # Every fact FlowState stored for a request was stored by the system (one memory, or one
    # fact edge, each).
    assert run.stored == [len(w.facts) for w in report.writes]
    # The scripts answered with FlowState's facts, verbatim.
    sent = " ".join(r.reply for r in run.received)
    for fact in (f for w in report.writes for f in w.facts):
        assert json.dumps(fact.summary, ensure_ascii=False)[1:-1] in sent


def test_flowstate_upkeep_is_its_memory_lines_and_the_protocols_writing_part(report) -> None:  # noqa: ANN001
    first = report.writes[0]
    # One line per fact, and the request's SUMMARY: the lines the model wrote.
    kinds = [ln.split(" ", 1)[0] for ln in first.write_lines]
    assert kinds.count("ADD") == len(first.facts) >= 1 and kinds.count("SUMMARY") == 1
    for w in report.writes:
        assert w.write_line_tokens == sum(text_tokens(ln + "\n", BILLED_AS) for ln in w.write_lines)
    # The first request's calls show the first request's protocol; its writing part is its
    # ADD, UPDATE/REMOVE and SUMMARY lines and the vocabulary line.
    writing = re.compile(r"^(ADD|UPDATE|SUMMARY|Changes apply|category:)")
    first_protocol = protocol(Limits(), has_past=False)
    lines = [ln for ln in first_protocol.splitlines() if writing.match(ln)]
    assert any(ln.startswith("ADD") for ln in lines) and lines[-1].startswith("category:")
    per_call = text_tokens("\n".join(lines), BILLED_AS)
    assert first.protocol_write_tokens == first.calls * per_call
    # Every system's write costs more than FlowState's upkeep of the same request.
    for run in report.runs:
        assert all(
            b.tokens > w.upkeep_tokens for b, w in zip(run.bills, report.writes, strict=True)
        )


def test_the_command_prints_the_table_and_writes_the_json(
    neo4j_settings: Neo4jSettings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flowstate_bench.cli import bench

    monkeypatch.setenv("FLOWSTATE_NEO4J_URI", neo4j_settings.uri)
    if neo4j_settings.password is not None:
        monkeypatch.setenv("FLOWSTATE_NEO4J_PASSWORD", neo4j_settings.password.get_secret_value())
    args = ["upkeep", "--requests", "1", "--system", "mem0", "--out", str(tmp_path)]
    result = CliRunner().invoke(bench, args)
    assert result.exit_code == 0, result.output
    assert re.search(r"^r1\s+\d+\s+[\d,]+\s+[\d,]+\s+[\d,]+$", result.output, re.M)
    saved = json.loads((tmp_path / "upkeep.json").read_text())
    first = saved["requests"][0]
    assert first["mem0"]["stored"] == first["facts"] >= 1
    assert f"{first['mem0']['tokens']:,}" in result.output
    assert saved["versions"] == {"mem0ai": "2.2.1"}
