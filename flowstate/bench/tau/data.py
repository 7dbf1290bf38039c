"""The benchmark's data files: tasks, databases, policies and user-simulator guidelines.

Only data is read here (MIT, copied unchanged); the environments are our own code. The data
folder holds `tau2/<domain>/` and `tau-v1/airline/` (the airline tables, assembled as
`{flights, reservations, users}`).

>>> db_hash({"b": 1, "a": "é"}) == db_hash({"a": "é", "b": 1})
True
"""

from __future__ import annotations

import hashlib
import json
import pickle
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from flowstate.errors import UsageError

DOMAINS = ("airline", "retail", "mock")
AIRLINE_TABLES = ("flights", "reservations", "users")
# tau2's default when a task names no reward basis.
DEFAULT_REWARD_BASIS = ("DB", "COMMUNICATE")


def canonical_json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def db_hash(db: Any) -> str:
    """sha256 of the canonical JSON: key order and whitespace never change the hash."""
    return hashlib.sha256(canonical_json(db)).hexdigest()


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


def default_root() -> Path | None:
    """`../shared/data` next to the repository, when it is there."""
    candidate = Path(__file__).resolve().parents[3].parent / "shared" / "data"
    return candidate if (candidate / "tau2").is_dir() else None


class TauData:
    """The data folder. Databases are loaded once and handed out as fresh copies."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        if not (self.root / "tau2").is_dir():
            raise UsageError(f"{self.root} has no tau2/ folder: point --data at the data folder")
        self._pickled: dict[str, bytes] = {}
        self._hashes: dict[str, str] = {}
        self._shared: dict[str, dict[str, Any]] = {}

    @classmethod
    def locate(cls, root: Path | None = None) -> TauData:
        found = root or default_root()
        if found is None:
            raise UsageError("no tau-bench data folder found: give one with --data DIR")
        return cls(found)

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

    def db(self, domain: str) -> dict[str, Any]:
        """A fresh, private copy of the domain's database (a pickle round trip is the fastest
        deep copy of plain JSON data)."""
        if domain not in self._pickled:
            self._pickled[domain] = pickle.dumps(self.shared_db(domain))
        return pickle.loads(self._pickled[domain])

    def shared_db(self, domain: str) -> dict[str, Any]:
        """The one loaded copy, shared by every environment until it writes: never change it."""
        if domain not in self._shared:
            self._shared[domain] = self._load_db(domain)
        return self._shared[domain]

    def db_hash(self, domain: str) -> str:
        """The hash of the untouched database (computed once)."""
        if domain not in self._hashes:
            self._hashes[domain] = db_hash(self.shared_db(domain))
        return self._hashes[domain]

    def _load_db(self, domain: str) -> dict[str, Any]:
        if domain == "airline":
            folder = self.root / "tau-v1" / "airline"
            return {t: json.loads((folder / f"{t}.json").read_text()) for t in AIRLINE_TABLES}
        return json.loads((self.domain_dir(domain) / "db.json").read_text())
