"""Parity with the original environments: replay recorded episodes, compare every call.

The data folder's `tau2-parity/<domain>.jsonl` holds what the original tau2-bench environment
did: per episode, each call's arguments, its exact output text and error flag, and the
records the episode changed. An episode is replayed here on a fresh environment, call by call
in order; every output is compared byte for byte, every error flag, and every changed record
(both ways: none missing, none extra) in the fixtures' form: sorted-key JSON without null
fields, whole floats written as integers (`fixture_json`). Number types are still checked,
by the outputs, which show records as they are (`274.0`).

>>> fixture_json({"b": 274.0, "a": None, "c": [{"d": 0.5, "e": None}]})
'{"b": 274, "c": [{"d": 0.5}]}'
>>> Mismatch("ref:retail:0", 2, "output", "a", "b").line()
"ref:retail:0 call 2 output: expected 'a', got 'b'"
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from flowstate_bench.tau.data import TauData
from flowstate_bench.tau.domains import make_env
from flowstate_bench.tau.env import EnvOptions


@dataclass(frozen=True)
class Mismatch:
    episode: str
    call: int | None  # None: the changed records
    what: str  # "output", "error" or "changed <table>/<key>"
    expected: Any
    got: Any

    def line(self, width: int = 200) -> str:
        where = f"call {self.call} " if self.call is not None else ""
        return (
            f"{self.episode} {where}{self.what}: "
            f"expected {str(self.expected)[:width]!r}, got {str(self.got)[:width]!r}"
        )


@dataclass
class ParityResult:
    domain: str
    episodes: int = 0
    calls: int = 0
    mismatches: list[Mismatch] = field(default_factory=list)

    @property
    def matching_episodes(self) -> int:
        return self.episodes - len({m.episode for m in self.mismatches})


def episodes(data: TauData, domain: str) -> list[dict[str, Any]]:
    path = data.root / "tau2-parity" / f"{domain}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def replay_episode(
    data: TauData, episode: dict[str, Any], options: EnvOptions | None = None
) -> list[Mismatch]:
    """Every difference between the recorded episode and its replay here."""
    env = make_env(episode["domain"], data, options=options)
    found: list[Mismatch] = []
    eid = episode["id"]
    for k, call in enumerate(episode["calls"]):
        result = env.call(call["name"], call["arguments"])
        if result.is_error != call["error"]:
            found.append(Mismatch(eid, k, "error", call["error"], result.is_error))
        if result.output != call["output"]:
            found.append(Mismatch(eid, k, "output", call["output"], result.output))
    expected = episode["changed"]
    got = {t: {k: fixture_json(r) for k, r in rows.items()} for t, rows in env.changed().items()}
    for table in sorted(set(expected) | set(got)):
        want, have = expected.get(table, {}), got.get(table, {})
        for key in sorted(set(want) | set(have)):
            if want.get(key) != have.get(key):
                found.append(
                    Mismatch(eid, None, f"changed {table}/{key}", want.get(key), have.get(key))
                )
    return found


def fixture_json(record: Any) -> str:
    """A record in the fixtures' form of a changed record."""
    return json.dumps(_fixture_form(record), sort_keys=True)


def _fixture_form(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _fixture_form(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_fixture_form(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def check_domain(data: TauData, domain: str, options: EnvOptions | None = None) -> ParityResult:
    result = ParityResult(domain)
    for episode in episodes(data, domain):
        result.episodes += 1
        result.calls += len(episode["calls"])
        result.mismatches += replay_episode(data, episode, options)
    return result
