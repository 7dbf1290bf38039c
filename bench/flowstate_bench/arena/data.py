"""MemoryArena rows as the HF dataset lays them out, and the optional oracle answer key.

`DIR/<config>/data.jsonl` (or `DIR/<config>.jsonl`) holds one task per line with `id`,
`questions` and `answers` (plus each config's own keys). `DIR/<config>/oracle.json`, written for
fixtures, says which facts subtask k needs: `{task_id: {k: [{"from": j, "fact": "..."}]}}`, with
k and j counted from 1 (j = 0 is travel's base person).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flowstate.errors import UsageError
from flowstate_bench.arena.choices import CONFIGS

__all__ = ["CONFIGS"]


@dataclass(frozen=True)
class Fact:
    source: int  # the subtask (1-based; 0 = travel's base person) the fact comes from
    text: str


@dataclass(frozen=True)
class ArenaTask:
    config: str
    id: str
    row: dict[str, Any] = field(repr=False)
    facts: dict[int, list[Fact]] | None = field(default=None, repr=False)  # None: no key

    @property
    def questions(self) -> list[str]:
        return list(self.row["questions"])

    @property
    def answers(self) -> list[Any]:
        return list(self.row["answers"])

    def __len__(self) -> int:
        return len(self.row["questions"])


def normalise(text: str) -> str:
    """How facts are looked for: lowercase, whitespace collapsed."""
    return " ".join(text.lower().split())


class ArenaData:
    """A folder of MemoryArena configs (the HF download, or test fixtures)."""

    def __init__(self, root: Path) -> None:
        if not root.is_dir():
            raise UsageError(f"--data {root} is not a folder")
        self.root = root

    def rows_path(self, config: str) -> Path:
        for path in (self.root / config / "data.jsonl", self.root / f"{config}.jsonl"):
            if path.is_file():
                return path
        raise UsageError(
            f"no {config}/data.jsonl or {config}.jsonl under {self.root}; download it with "
            "`hf download ZexueHe/memoryarena --repo-type dataset --local-dir DIR`"
        )

    def tasks(self, config: str) -> list[ArenaTask]:
        if config not in CONFIGS:
            raise UsageError(f"unknown config {config!r}; choose from {', '.join(CONFIGS)}")
        key = self._oracle_key(config)
        tasks = []
        path = self.rows_path(config)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                tid = str(row["id"])
                if len(row["questions"]) != len(row["answers"]) or not row["questions"]:
                    raise ValueError("questions and answers differ in length or are empty")
            except (ValueError, KeyError, TypeError) as e:
                raise UsageError(f"{path}:{n}: not a MemoryArena row ({e})") from e
            tasks.append(ArenaTask(config, tid, row, key.get(tid) if key is not None else None))
        return tasks

    def _oracle_key(self, config: str) -> dict[str, dict[int, list[Fact]]] | None:
        path = self.root / config / "oracle.json"
        if not path.is_file():
            return None
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            return {
                str(tid): {
                    int(k): [Fact(int(f["from"]), str(f["fact"])) for f in facts]
                    for k, facts in per_task.items()
                }
                for tid, per_task in raw.items()
            }
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise UsageError(f"{path}: not an oracle key ({e})") from e
