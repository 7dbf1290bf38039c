"""The benchmark's data files: tasks, databases, policies and user-simulator guidelines.

Only data is read here (MIT, copied unchanged); the environments are our own code. The data
folder is given explicitly (`--data DIR` or `FLOWSTATE_TAU_DATA`); it holds `tau2/<domain>/`,
with the τ³ `db.json` of each domain. Without `tau2/airline/db.json`, the airline database is
rebuilt from the tau-bench v1 tables in `tau-v1/airline/` (a fallback that differs from τ³ in
two records). Every database is normalised to the original's record shapes (`records.py`).

>>> db_hash({"b": 1, "a": "é"}) == db_hash({"a": "é", "b": 1})
True
"""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from flowstate.errors import UsageError
from flowstate_bench.tau.records import normalised

DOMAINS = ("airline", "retail", "mock")
AIRLINE_TABLES = ("flights", "reservations", "users")
# tau2's default when a task names no reward basis.
DEFAULT_REWARD_BASIS = ("DB", "COMMUNICATE")


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def db_hash(db: Any) -> str:
    """sha256 of the canonical JSON: key order and whitespace never change the hash."""
    return hashlib.sha256(canonical_json(db)).hexdigest()


class Snapshot:
    """A loaded database that environments share and never change: an environment copies a
    table's index (cheap) and a record only before changing it. The canonical JSON of the
    shared records is cached, so hashing a changed database re-encodes only what changed.
    """

    def __init__(self, db: dict[str, Any]) -> None:
        self.db = db
        self._encoded: dict[tuple[str, str], bytes] = {}
        self._hash: str | None = None

    @property
    def hash(self) -> str:
        if self._hash is None:
            self._hash = db_hash(self.db)
        return self._hash

    def hash_of(self, db: dict[str, Any]) -> str:
        """`db_hash(db)`, computed from cached parts: canonical JSON is compositional."""
        parts = [b"{"]
        for i, name in enumerate(sorted(db)):
            parts += [b"," if i else b"", canonical_json(name), b":"]
            rows, shared = db[name], self.db.get(name)
            if not isinstance(rows, dict) or not isinstance(shared, dict):
                parts.append(canonical_json(rows))
                continue
            parts.append(b"{")
            for j, key in enumerate(sorted(rows)):
                parts += [b"," if j else b"", canonical_json(key), b":"]
                row = rows[key]
                parts.append(
                    self._encode(name, key) if shared.get(key) is row else canonical_json(row)
                )
            parts.append(b"}")
        parts.append(b"}")
        return hashlib.sha256(b"".join(parts)).hexdigest()

    def _encode(self, table: str, key: str) -> bytes:
        if (table, key) not in self._encoded:
            self._encoded[(table, key)] = canonical_json(self.db[table][key])
        return self._encoded[(table, key)]


class Action(BaseModel):
    """One reference tool call of a task."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    action_id: str = ""
    name: str
    arguments: dict[str, Any] = {}
    # None: compare every reference argument; []: the name alone decides.
    compare_args: list[str] | None = None

    def compared(self) -> dict[str, Any]:
        keys = self.arguments if self.compare_args is None else self.compare_args
        return {k: self.arguments[k] for k in keys if k in self.arguments}


class Scenario(BaseModel):
    """What the simulated user knows and wants (tau2's `user_scenario.instructions`)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    reason_for_call: str = ""
    known_info: str = ""
    unknown_info: str = ""
    task_instructions: str = ""
    persona: str = ""

    def opening(self) -> str:
        """What the user says first, before any question: who they are and why they call."""
        return "\n".join(p for p in (self.known_info, self.reason_for_call) if p).strip()

    def as_prompt(self) -> str:
        parts = [
            ("Persona", self.persona),
            ("Reason for call", self.reason_for_call),
            ("Known info", self.known_info),
            ("Unknown info", self.unknown_info),
            ("Task instructions", self.task_instructions),
        ]
        return "\n\n".join(f"{title}:\n{text}" for title, text in parts if text)


class Task(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    domain: str
    scenario: Scenario
    actions: list[Action] = []
    communicate_info: list[str] = []
    nl_assertions: list[str] = []
    env_assertions: list[dict[str, Any]] = []
    reward_basis: list[str] = Field(default_factory=lambda: list(DEFAULT_REWARD_BASIS))
    initial_state: dict[str, Any] = {}

    @classmethod
    def from_raw(cls, raw: dict[str, Any], domain: str) -> Task:
        user = raw.get("user_scenario") or {}
        given = user.get("instructions") or {}
        # The mock domain gives its instructions as one string.
        fields = given if isinstance(given, dict) else {"reason_for_call": given}
        scenario = Scenario(
            persona=user.get("persona") or "",
            **{k: v or "" for k, v in fields.items() if k in Scenario.model_fields},
        )
        crit = raw.get("evaluation_criteria") or {}
        return cls(
            id=str(raw["id"]),
            domain=domain,
            scenario=scenario,
            actions=[Action.model_validate(a) for a in crit.get("actions") or []],
            communicate_info=[str(c) for c in crit.get("communicate_info") or []],
            nl_assertions=list(crit.get("nl_assertions") or []),
            env_assertions=list(crit.get("env_assertions") or []),
            reward_basis=list(crit.get("reward_basis") or DEFAULT_REWARD_BASIS),
            initial_state=raw.get("initial_state") or {},
        )


class TauData:
    """The data folder. Databases are loaded once and handed out as fresh copies."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        if not (self.root / "tau2").is_dir():
            raise UsageError(f"{self.root} has no tau2/ folder: point --data at the data folder")
        self._snapshots: dict[str, Snapshot] = {}

    @classmethod
    def locate(cls, root: Path | None) -> TauData:
        """The data folder given by `--data DIR` or `FLOWSTATE_TAU_DATA` (read by the caller)."""
        if root is None:
            raise UsageError(
                "no tau-bench data folder: give one with --data DIR or FLOWSTATE_TAU_DATA"
            )
        return cls(root)

    def domain_dir(self, domain: str) -> Path:
        if domain not in DOMAINS:
            raise UsageError(f"unknown domain {domain!r}; one of {', '.join(DOMAINS)}")
        return self.root / "tau2" / domain

    def tasks(self, domain: str) -> list[Task]:
        raw = json.loads((self.domain_dir(domain) / "tasks.json").read_text())
        return [Task.from_raw(t, domain) for t in raw]

    def split(self, domain: str, name: str) -> list[str]:
        """Task ids of a split of `split_tasks.json` (train, test, base)."""
        splits = json.loads((self.domain_dir(domain) / "split_tasks.json").read_text())
        if name not in splits:
            raise UsageError(f"{domain} has no split {name!r}; one of {', '.join(splits)}")
        return [str(i) for i in splits[name]]

    def policy(self, domain: str) -> str:
        return (self.domain_dir(domain) / "policy.md").read_text()

    @cached_property
    def guidelines(self) -> str:
        return (self.root / "tau2" / "user_simulator" / "simulation_guidelines.md").read_text()

    def snapshot(self, domain: str) -> Snapshot:
        """The domain's database as loaded, shared by every environment (loaded once)."""
        if domain not in self._snapshots:
            self._snapshots[domain] = Snapshot(self._load_db(domain))
        return self._snapshots[domain]

    def db_hash(self, domain: str) -> str:
        """The hash of the untouched database."""
        return self.snapshot(domain).hash

    def db_source(self, domain: str) -> Path:
        """Where the domain's database is read from: its τ³ `db.json`; for airline, when that
        file is absent, the tau-bench v1 tables (`tau-v1/airline/`, the fallback)."""
        staged = self.domain_dir(domain) / "db.json"
        if domain == "airline" and not staged.is_file():
            return self.root / "tau-v1" / "airline"
        return staged

    def _load_db(self, domain: str) -> dict[str, Any]:
        source = self.db_source(domain)
        if source.is_dir():
            # The v1 rebuild: flight HAT018 on 2024-05-11 reads `landed` (τ³: `delayed`) and
            # reservation Z7GOZK is one-way (τ³: a round trip), so tasks 2, 19, 38 differ.
            raw = {t: json.loads((source / f"{t}.json").read_text()) for t in AIRLINE_TABLES}
            # v1 keys its users by id without repeating it in the record; τ³ repeats it.
            raw["users"] = {uid: {"user_id": uid, **u} for uid, u in raw["users"].items()}
        else:
            raw = json.loads(source.read_text())
        return normalised(domain, raw)
