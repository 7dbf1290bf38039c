"""docs/mcp.md's tool table names every tool the server can list, with the
annotations the server sends, and no tool it does not have."""

from __future__ import annotations

import re
from pathlib import Path

from flowstate.mcp.catalog import SPECS, listed

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `(memory_\w+)`[^|]*\|(.*)$", re.MULTILINE)


def _rows(text: str) -> dict[str, list[str]]:
    return {m.group(1): [c.strip() for c in m.group(2).split("|")] for m in ROW.finditer(text)}


def _flag(cell: str) -> bool:
    return cell == "yes"


def _check(path: Path, with_title: bool) -> None:
    rows = _rows(path.read_text(encoding="utf-8"))
    assert sorted(rows) == sorted(SPECS), path.name
    for name, cells in rows.items():
        spec = SPECS[name]
        *_, read_only, destructive, idempotent, _end = cells
        if with_title:
            assert cells[0] == spec.title, name
        flags = (_flag(read_only), _flag(destructive), _flag(idempotent))
        assert flags == (spec.read_only, spec.destructive, spec.idempotent), (path.name, name)


def test_docs_table_has_every_tool_with_its_annotations() -> None:
    _check(ROOT / "docs" / "mcp.md", with_title=True)


def test_a_read_only_server_lists_reads_only_and_forget_needs_its_flag() -> None:
    reads = listed(read_only=True, allow_forget=True)
    assert reads and all(t.read_only for t in reads)
    assert "memory_forget" not in {t.name for t in listed(read_only=False, allow_forget=False)}
    assert "memory_forget" in {t.name for t in listed(read_only=False, allow_forget=True)}
