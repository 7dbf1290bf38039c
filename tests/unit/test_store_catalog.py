"""The query catalog: every name has a file, every file is used, and both layouts resolve."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import flowstate.store as store_pkg
from flowstate.store import catalog
from flowstate.store.catalog import Q

STORE_DIR = Path(store_pkg.__file__).parent
REPO_ROOT = Path(__file__).resolve().parents[2]


def _names_used_in_code() -> set[str]:
    """Every `Q.NAME` referenced by the store's modules, the catalog itself excepted."""
    used = set()
    for path in STORE_DIR.glob("*.py"):
        if path.name == "catalog.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "Q"
            ):
                used.add(Q[node.attr].value)
    return used


def test_every_name_has_a_file():
    missing = {q.value for q in Q} - catalog.file_names()
    assert not missing, f"Q names without a .cypher file: {missing}"


def test_every_file_has_a_name():
    orphans = catalog.file_names() - {q.value for q in Q}
    assert not orphans, f".cypher files no code can load: {orphans}"


def test_every_name_is_used_by_code():
    unused = {q.value for q in Q} - _names_used_in_code()
    assert not unused, f"queries nothing runs: {unused}"


def test_only_the_store_imports_neo4j():
    package = STORE_DIR.parent
    offenders = []
    for path in package.rglob("*.py"):
        if STORE_DIR in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "neo4j" or n.startswith("neo4j.") for n in names):
                offenders.append(str(path.relative_to(package)))
    assert offenders == []


def test_the_store_imports_nothing_above_it():
    """The front door, the engine and the package root (which re-exports them) sit above the
    store: it may use the pure layers, the settings, the errors and the version only."""
    allowed = ("flowstate.store", "flowstate.models", "flowstate.errors", "flowstate.settings",
               "flowstate.version")  # fmt: skip
    offenders = []
    for path in STORE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                ours = name == "flowstate" or name.startswith("flowstate.")
                if ours and not name.startswith(allowed):
                    offenders.append(f"{path.name}: {name}")
    assert offenders == []


def test_queries_load_and_are_cached():
    text = catalog.query(Q.HISTORY)
    assert "$namespace" in text
    assert catalog.query("history") is text


def test_unknown_query_is_a_key_error():
    with pytest.raises(KeyError, match="nope.cypher"):
        catalog.query("nope")


def test_schema_splits_into_idempotent_statements():
    parts = catalog.statements(Q.SCHEMA)
    assert len(parts) == 14
    for part in parts:
        assert part.startswith("CREATE ") and "IF NOT EXISTS" in part
        assert ";" not in part and "//" not in part


def test_checkout_layout_resolves_to_repo_cypher():
    assert catalog.cypher_dir() == REPO_ROOT / "cypher"


def test_wheel_layout_prefers_packaged_cypher(tmp_path):
    package = tmp_path / "site-packages" / "flowstate"
    (package / "_cypher").mkdir(parents=True)
    (package / "_cypher" / "schema.cypher").write_text(
        "CREATE INDEX x IF NOT EXISTS FOR (n:A) ON (n.a);"
    )
    assert catalog.find_cypher_dir(package) == package / "_cypher"


def test_missing_folder_is_reported(tmp_path):
    with pytest.raises(FileNotFoundError, match="_cypher"):
        catalog.find_cypher_dir(tmp_path / "flowstate")


def test_pyproject_ships_the_folder_where_the_catalog_looks():
    text = (REPO_ROOT / "pyproject.toml").read_text()
    assert '"cypher" = "flowstate/_cypher"' in text


def test_no_query_formats_labels_or_values_into_text():
    # Dynamic labels and types come only through $(...) on parameters, never string assembly.
    for path in STORE_DIR.glob("*.py"):
        source = path.read_text()
        assert ".format(" not in source
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.JoinedStr):
                text = ast.unparse(node)
                assert not any(w in text for w in ("MATCH", "CREATE", "MERGE", "SET ")), text


def test_store_public_api():
    assert store_pkg.__all__ == [
        "AsyncRepository",
        "AsyncStore",
        "GraphCounts",
        "Removal",
        "Repository",
        "Store",
    ]
