"""`flowstate bench upkeep`: what keeping memory costs per request, FlowState beside Mem0 and
Graphiti, on the demo's requests.

1. The demo's scripted FlowState agent runs the requests (`demo_writes`): its facts and its
   upkeep (write lines plus the writing part of the protocol on every call).
2. Each memory system ingests each request's turn (the request and the answer) through its real
   write path, its model calls answered by a script that extracts exactly those facts
   (`scripts`), served and counted by the local endpoint (`endpoint`).
3. The report: per request, each system's whole bill (prompt plus completion tokens of every
   call of the write; embedding tokens apart) beside FlowState's upkeep.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from flowstate.settings import Neo4jSettings
from flowstate.store import Store
from flowstate_bench.upkeep.demo_writes import RequestWrites, demo_writes
from flowstate_bench.upkeep.endpoint import BILLED_AS, Bill, Endpoint, Received
from flowstate_bench.upkeep.scripts import GraphitiScript, Mem0Script, Script
from flowstate_bench.upkeep.systems import SYSTEMS, writer

PACKAGES = {"mem0": "mem0ai", "graphiti": "graphiti-core"}
REPORT_NAME = "upkeep.json"


@dataclass
class SystemRun:
    """One memory system over the requests: a bill per write, what it stored, every call."""

    system: str
    package: str
    bills: list[Bill] = field(default_factory=list)
    stored: list[int] = field(default_factory=list)  # memories (Mem0) or fact edges (Graphiti)
    received: list[Received] = field(default_factory=list)
    wire: list[tuple[str, str, bytes]] = field(default_factory=list)  # (label, path, bytes)
    errors: list[str] = field(default_factory=list)

    @property
    def total(self) -> Bill:
        return Bill(
            sum(b.prompt_tokens for b in self.bills),
            sum(b.completion_tokens for b in self.bills),
            sum(b.calls for b in self.bills),
            sum(b.embedding_tokens for b in self.bills),
            sum(b.embedding_calls for b in self.bills),
            {
                k: sum(b.by_schema.get(k, 0) for b in self.bills)
                for k in dict.fromkeys(k for b in self.bills for k in b.by_schema)
            },  # fmt: skip
        )


@dataclass
class UpkeepReport:
    writes: list[RequestWrites]
    runs: list[SystemRun]

    def as_dict(self) -> dict[str, Any]:
        return {
            "billed_as": BILLED_AS,
            "requests": [
                {
                    "request_id": w.request_id,
                    "facts": len(w.facts),
                    "flowstate": {
                        "calls": w.calls,
                        "write_line_tokens": w.write_line_tokens,
                        "protocol_write_tokens": w.protocol_write_tokens,
                        "upkeep_tokens": w.upkeep_tokens,
                        "write_lines": list(w.write_lines),
                    },
                    **{
                        r.system: {
                            **asdict(r.bills[i]),
                            "tokens": r.bills[i].tokens,
                            "stored": r.stored[i],
                        }  # fmt: skip
                        for r in self.runs
                    },
                }
                for i, w in enumerate(self.writes)
            ],
            "totals": {
                "flowstate": {
                    "upkeep_tokens": sum(w.upkeep_tokens for w in self.writes),
                    "write_line_tokens": sum(w.write_line_tokens for w in self.writes),
                    "protocol_write_tokens": sum(w.protocol_write_tokens for w in self.writes),
                },
                **{r.system: {**asdict(r.total), "tokens": r.total.tokens} for r in self.runs},
            },
            "versions": {r.package: _version(r.package) for r in self.runs},
        }


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def missing_systems(systems: tuple[str, ...] = SYSTEMS) -> list[str]:
    """The packages of `systems` that are not installed (the bench's `upkeep` extra)."""
    return [PACKAGES[s] for s in systems if _version(PACKAGES[s]) == "not installed"]


def run_upkeep(
    store: Store,
    neo4j: Neo4jSettings,
    requests: int = 8,
    systems: tuple[str, ...] = SYSTEMS,
) -> UpkeepReport:
    """Measure the first `requests` demo requests on FlowState and on each of `systems`."""
    # Graphiti's searches name edge properties an empty group lacks: the server says so at
    # every query, which is noise here.
    logging.getLogger("neo4j.notifications").setLevel(logging.ERROR)
    writes = demo_writes(store, requests)
    return UpkeepReport(writes, [measure(system, writes, neo4j) for system in systems])


def measure(system: str, writes: list[RequestWrites], neo4j: Neo4jSettings) -> SystemRun:
    """One system's real write path over `writes`, each write billed at the endpoint."""
    script: Script = Mem0Script() if system == "mem0" else GraphitiScript()
    run = SystemRun(system, PACKAGES[system])
    with Endpoint(script) as endpoint, writer(system, endpoint, neo4j) as memory:
        for w in writes:
            script.current = w
            endpoint.label = w.request_id
            try:
                result = memory.write(w)
            except Exception as e:
                if endpoint.errors:  # the system failed because the script could not answer
                    raise RuntimeError(f"{system}: {endpoint.errors[0]}") from e
                raise
            run.bills.append(endpoint.bill(w.request_id))
            run.stored.append(_stored(system, result))
        run.received = list(endpoint.received)
        run.wire = list(endpoint.wire)
        run.errors = list(endpoint.errors)
    if run.errors:
        raise RuntimeError(f"{system}: the script could not answer: {run.errors[0]}")
    return run


def _stored(system: str, result: Any) -> int:
    if system == "mem0":
        return sum(1 for r in result.get("results", []) if r.get("event") == "ADD")
    return len(getattr(result, "edges", []) or [])


def write_report(report: UpkeepReport, out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / REPORT_NAME
    path.write_text(json.dumps(report.as_dict(), indent=2, ensure_ascii=False) + "\n")
    return path


def table(report: UpkeepReport) -> list[str]:
    """The per-request table, as text lines: tokens (prompt + completion) per write."""
    names = [r.system for r in report.runs]
    head = f"{'request':<8}{'facts':>6}{'FlowState':>11}" + "".join(f"{n:>11}" for n in names)
    head += "".join(f"{n + ' emb':>14}" for n in names)
    lines = [head]
    for i, w in enumerate(report.writes):
        row = f"{w.request_id:<8}{len(w.facts):>6}{w.upkeep_tokens:>11,}"
        row += "".join(f"{r.bills[i].tokens:>11,}" for r in report.runs)
        row += "".join(f"{r.bills[i].embedding_tokens:>14,}" for r in report.runs)
        lines.append(row)
    total = sum(w.upkeep_tokens for w in report.writes)
    row = f"{'total':<8}{sum(len(w.facts) for w in report.writes):>6}{total:>11,}"
    row += "".join(f"{r.total.tokens:>11,}" for r in report.runs)
    row += "".join(f"{r.total.embedding_tokens:>14,}" for r in report.runs)
    return [*lines, row]
