"""The skeleton the tau-bench and MemoryArena harnesses share: a run is a list of units (one
group — a domain or a config —, strategy, trial, task and agent each), run one after another;
each finished unit is written to a journal in the output folder, so an interrupted run resumes
from there; the namespaces and scripted models a run makes are dropped at its end.

Each harness keeps its own logic in its package: what a unit runs (`run_unit`), what its
result is (`Result`, a dataclass the journal stores as JSON), how its tasks are found.

>>> Unit("airline", "flowstate", 0, "7", "oracle").key
'airline|flowstate|0|7|oracle'
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import TypeAdapter, ValidationError

from flowstate.errors import UsageError
from flowstate.store import Store
from flowstate_bench.memory_models import MemoryClients
from flowstate_bench.seam import Namespaces
from flowstate_bench.strategy_names import ALIASES, FLOWSTATE_VARIANTS

AgentKind = Literal["oracle", "forgetful", "reader", "llm"]
JOURNAL_FILE = "runs.jsonl"
# Run-config fields that change nothing a unit computes: a resumed run may differ in them.
NOT_FINGERPRINTED = frozenset({"keep_memory", "price_model"})


@dataclass(frozen=True)
class Unit:
    group: str  # tau-bench: the domain; MemoryArena: the config
    strategy: str
    trial: int
    task_id: str
    agent: str

    @property
    def key(self) -> str:
        return f"{self.group}|{self.strategy}|{self.trial}|{self.task_id}|{self.agent}"


class RunSettings(Protocol):
    """What the skeleton reads of a harness's run config."""

    strategies: list[str]
    trials: int
    agent: str
    model: str | None
    memory_model: str | None
    keep_memory: bool
    model_kwargs: dict[str, Any]
    task_ids: list[str] | None
    limit: int | None

    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


def agents_of(agent: str) -> list[str]:
    """The agents a run drives: a reader run carries the oracle it is compared with."""
    return ["oracle", "reader"] if agent == "reader" else [agent]


def select(tasks: list[Any], task_ids: list[str] | None, limit: int | None) -> list[Any]:
    """The tasks named by `task_ids` (in data order), then the first `limit`."""
    if task_ids is not None:
        wanted = set(task_ids)
        tasks = [t for t in tasks if t.id in wanted]
    return tasks[:limit] if limit else tasks


def fingerprint(config: RunSettings) -> dict[str, Any]:
    dumped = config.model_dump(mode="json")
    return {k: v for k, v in sorted(dumped.items()) if k not in NOT_FINGERPRINTED}


class Journal:
    """`<folder>/runs.jsonl`: a header with the run's fingerprint, then one JSON line per
    finished unit. A line cut by a crash (the last one) is ignored and its unit runs again.

    A run whose folder holds another run's journal (other options, other data) is refused
    (`fresh` starts over), and so is a second process running into the same folder at once.
    `data` names what the run reads (see `data_fingerprint`)."""

    def __init__(
        self,
        folder: Path | None,
        kind: str,
        config: RunSettings,
        fresh: bool = False,
        data: str | None = None,
    ) -> None:
        self.path = folder / JOURNAL_FILE if folder is not None else None
        self.header = {"journal": kind, "config": fingerprint(config), "data": data}
        if self.path is not None and fresh and self.path.exists():
            self.path.unlink()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """This process alone runs into the folder while the block runs: two runs appending
        to one journal would both run, and pay for, every unit."""
        if self.path is None:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(JOURNAL_FILE + ".lock")
        with lock.open("a+") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                holder = f.read().strip() or "another process"
                raise UsageError(
                    f"{self.path.parent} is in use by a run of {holder}: wait for it to end, "
                    "or use another --out"
                ) from None
            f.truncate(0)
            f.write(f"pid {os.getpid()}\n")
            f.flush()
            try:
                yield
            finally:
                f.truncate(0)
                fcntl.flock(f, fcntl.LOCK_UN)

    def load(self) -> dict[str, Any]:
        """The finished units' records by unit key (empty for a new run)."""
        if self.path is None or not self.path.exists():
            return {}
        lines = self.path.read_text(encoding="utf-8").splitlines()
        if not lines:
            return {}
        try:
            header = json.loads(lines[0])
        except ValueError:
            header = None
        if header != self.header:
            raise UsageError(
                f"{self.path} holds another run (other options or harness); "
                "use another --out, or --fresh to start this one over"
            )
        done: dict[str, Any] = {}
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except ValueError:
                continue  # cut by a crash while it was written
            if isinstance(entry, dict) and isinstance(entry.get("unit"), str):
                done[entry["unit"]] = entry.get("result")
        return done

    def write(self, unit: Unit, result: Any) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists() or self.path.stat().st_size == 0
        cut = not new and _last_byte(self.path) != b"\n"
        with self.path.open("a", encoding="utf-8") as f:
            if new:
                f.write(json.dumps(self.header, sort_keys=True) + "\n")
            elif cut:  # the line a crash cut stays apart from the next
                f.write("\n")
            f.write(json.dumps({"unit": unit.key, "result": result}, ensure_ascii=False) + "\n")
            f.flush()


def data_fingerprint(*paths: Path) -> str:
    """What a run reads, as a digest: the content of each file under `paths` (names and sizes
    only for files over 64 MB), so that a resume onto other data is refused."""
    import hashlib

    digest = hashlib.sha256()
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in files:
            size = path.stat().st_size
            digest.update(
                f"{path.relative_to(root) if root.is_dir() else path.name}|{size}|".encode()
            )
            if size <= 64 << 20:
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as f:
        f.seek(-1, 2)
        return f.read(1)


R = TypeVar("R")


class Harness(Generic[R]):
    """The run loop both harnesses share. Subclasses name their `kind` and result type, and
    implement `groups`, `tasks` and `run_unit`."""

    kind = "harness"
    result_type: type
    prefix = "bench"

    def __init__(
        self,
        config: Any,
        store: Store | None = None,
        progress: Callable[[R], None] | None = None,
        journal: Journal | None = None,
        known: tuple[str, ...] = (),
    ) -> None:
        unknown = set(config.strategies) - set(known) - set(ALIASES)
        if unknown or not config.strategies:
            raise UsageError(f"unknown strategies {sorted(unknown)}; from {', '.join(known)}")
        if set(config.strategies) & set(FLOWSTATE_VARIANTS) and store is None:
            raise UsageError("the flowstate strategies need a Neo4j store")
        if config.agent == "llm" and not config.model:
            raise UsageError("--agent llm needs --model")
        self.config, self.store = config, store
        self.progress = progress
        self.journal = journal
        self.run_id = uuid.uuid4().hex[:8]
        self.namespaces = Namespaces(store, config.keep_memory)
        self.memory_clients = MemoryClients(
            config.memory_model,
            config.agent,
            config.model,
            f"{self.prefix}-memory-{self.run_id}",
            **config.model_kwargs,
        )
        self._adapter: TypeAdapter[Any] = TypeAdapter(self.result_type)

    # -- what a harness provides ------------------------------------------------------------

    def groups(self) -> list[str]:
        raise NotImplementedError

    def tasks(self, group: str) -> list[Any]:
        raise NotImplementedError

    def run_unit(self, unit: Unit, task: Any) -> R:
        raise NotImplementedError

    def check_resume(self, done: dict[str, Any]) -> None:
        """Refuse a resume the harness cannot do (e.g. a memory that spans tasks)."""

    # -- the loop ---------------------------------------------------------------------------

    def units(self) -> Iterator[tuple[Unit, Any]]:
        c = self.config
        for group in self.groups():
            for strategy in c.strategies:
                for agent in agents_of(c.agent):
                    for trial in range(c.trials):
                        for task in self.tasks(group):
                            yield Unit(group, strategy, trial, str(task.id), agent), task

    def count(self) -> int:
        return sum(1 for _ in self.units())

    def run(self) -> list[R]:
        with self.journal.held() if self.journal is not None else contextlib.nullcontext():
            return self._run()

    def _run(self) -> list[R]:
        done = self.journal.load() if self.journal is not None else {}
        if done:
            self.check_resume(done)
        results: list[R] = []
        try:
            for unit, task in self.units():
                result = self._recorded(done.get(unit.key))
                if result is None:
                    result = self.run_unit(unit, task)
                    if self.journal is not None:
                        self.journal.write(unit, self._adapter.dump_python(result, mode="json"))
                results.append(result)
                if self.progress is not None:
                    self.progress(result)
        finally:
            self.cleanup()
        return results

    def _recorded(self, record: Any) -> R | None:
        """A finished unit's result read back; None (run it again) when the record does not
        hold one."""
        if record is None:
            return None
        try:
            return self._adapter.validate_python(record)  # type: ignore[no-any-return]
        except ValidationError:
            return None

    def scripted_name(self, unit: Unit) -> str:
        """A scripted model's name for a unit, unique to this run."""
        return f"{self.prefix}-{unit.agent}-{self.run_id}-{unit.key.replace('|', '-')}"

    def namespace(self, *parts: str) -> str:
        return self.namespaces.new(self.prefix, *parts[:1], self.run_id, *parts[1:])

    def cleanup(self) -> None:
        self.namespaces.cleanup()
        self.memory_clients.close()
