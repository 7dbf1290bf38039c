"""A quick command line: what each command imports, seen from a fresh interpreter.

`--help` on every command (plugins included) imports neither the Neo4j driver nor litellm;
the memory commands that only read or delete (`index`, `show`, `history`, `why`, `export`,
`forget`) run against the real Neo4j without importing litellm.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from flowstate.cli.app import main
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store

HEAVY = ("neo4j", "litellm")

# Runs the command line in-process, then says which heavy modules it left loaded.
_RUNNER = f"""
import json, sys
from flowstate.cli.app import main
try:
    main(sys.argv[1:], prog_name="flowstate")
except SystemExit as e:
    code = e.code or 0
loaded = [m for m in {HEAVY!r} if m in sys.modules]
print("\\nLOADED " + json.dumps({{"exit": code, "loaded": loaded}}))
"""


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, list[str], str]:
    """Exit code, heavy modules loaded, and output of `flowstate ARGS` in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )
    head, _, tail = done.stdout.rpartition("\nLOADED ")
    assert tail, f"the runner did not finish: {done.stderr[-2000:]}"
    report = json.loads(tail)
    return report["exit"], report["loaded"], head + done.stderr


def _command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and group, plugins included (they are not in `group.commands`)."""
    ctx = click.Context(group)
    paths = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths += _command_paths(command, (*prefix, name))
    return paths


HELP_PATHS = [(), *_command_paths(main)]


def test_the_walk_reaches_every_family() -> None:
    names = {" ".join(p) for p in HELP_PATHS}
    assert {"", "index", "mcp", "neo4j start", "retention apply", "bench"} <= names
    assert {
        "bench tau",
        "bench arena",
        "bench faults",
    } <= names  # flowstate-memory-bench is installed


@pytest.mark.parametrize("path", HELP_PATHS, ids=lambda p: " ".join(p) or "flowstate")
def test_help_imports_neither_the_driver_nor_litellm(path: tuple[str, ...]) -> None:
    code, loaded, output = _run([*path, "--help"])
    assert code == 0, output
    assert f"Usage: flowstate {' '.join(path)}".rstrip() in output
    assert loaded == []


# --- the read and delete commands, run for real --------------------------------------------


def _demo_into(namespace: str, env: dict[str, str]) -> None:
    done = CliRunner().invoke(main, ["demo", "-N", namespace, "--json"], env=env)
    assert done.exit_code == 0, done.output


@pytest.fixture(scope="module")
def neo4j_env(neo4j_settings: Neo4jSettings) -> dict[str, str]:
    env = {"FLOWSTATE_NEO4J_URI": neo4j_settings.uri}
    if neo4j_settings.password:
        env["FLOWSTATE_NEO4J_PASSWORD"] = neo4j_settings.password.get_secret_value()
    return env


@pytest.fixture(scope="module")
def seeded(neo4j_settings: Neo4jSettings, neo4j_env: dict[str, str]) -> Iterator[str]:
    """A namespace holding the demo's eight requests (written here, where litellm may load)."""
    namespace = f"perf_imports_{uuid.uuid4().hex[:8]}"
    _demo_into(namespace, neo4j_env)
    yield namespace
    with Store.connect(neo4j_settings) as store:
        Repository(store, namespace).forget_namespace(force=True)


@pytest.fixture
def copy_of_seeded(seeded: str, neo4j_settings: Neo4jSettings) -> Iterator[str]:
    """A copy of the seeded namespace that a test may delete from."""
    namespace = f"perf_forget_{uuid.uuid4().hex[:8]}"
    with Store.connect(neo4j_settings) as store:
        lines = list(Repository(store, seeded).export_jsonl())
        Repository(store, namespace).import_jsonl(lines)
    yield namespace
    with Store.connect(neo4j_settings) as store:
        Repository(store, namespace).forget_namespace(force=True)


@pytest.mark.neo4j
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["index"], "r3.hotel_choice [decision]"),
        (["show", "r3.hotel_choice"], "from request r3"),
        (["history"], "r8"),
        (["why", "r2.hotel_options"], "EVIDENCED_BY r2.o1"),
        (["export"], '"r3.hotel_choice"'),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else "",
)
def test_read_commands_run_without_litellm(
    args: list[str], expected: str, seeded: str, neo4j_env: dict[str, str]
) -> None:
    code, loaded, output = _run([*args, "-N", seeded], neo4j_env)
    assert code == 0, output
    assert expected in output
    assert loaded == ["neo4j"]  # it did talk to Neo4j, and nothing more was loaded


@pytest.mark.neo4j
def test_forget_runs_without_litellm(
    copy_of_seeded: str, neo4j_env: dict[str, str], neo4j_settings: Neo4jSettings
) -> None:
    code, loaded, output = _run(["forget", "r8", "-N", copy_of_seeded, "--yes"], neo4j_env)
    assert code == 0, output
    assert f"Forgot r8 of {copy_of_seeded!r}" in output
    assert loaded == ["neo4j"]
    with Store.connect(neo4j_settings) as store:
        assert [r.id for r in Repository(store, copy_of_seeded).history()][-1] == "r7"
