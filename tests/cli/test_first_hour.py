"""The first hour of a new user, through the command line and the MCP server against the real
Neo4j: `make demo` needs no Node; a server nobody configured is named on stderr, once; `neo4j
stop` says which server it stops; `--print-config` writes the configured server; the help
says what the install can run; contradictory flags are refused; an empty namespace is
explained; counts read `1 node`."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner, Result

from flowstate.api import FlowState
from flowstate.cli.app import main
from flowstate.local.server import ServerInfo
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store

ROOT = Path(__file__).resolve().parents[2]
FLOWSTATE = str(Path(sys.executable).parent / "flowstate")
UNCONFIGURED = "No Neo4j configured (FLOWSTATE_NEO4J_URI)"


# --- make ----------------------------------------------------------------------------------


def _without(*programs: str, tmp_path: Path) -> str:
    """A PATH holding make and python3 but none of `programs`."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("make", "python3", "sh", "env"):
        found = shutil.which(tool)
        assert found, f"{tool} is needed to run make"
        (bin_dir / tool).symlink_to(found)
    for program in programs:
        assert not (bin_dir / program).exists()
    return str(bin_dir)


def _make_dry_run(target: str, path: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """What `make TARGET` would run in a fresh clone (every target out of date: -B)."""
    return subprocess.run(
        ["make", "-n", "-B", target, f"VENV={tmp_path / 'venv'}"],
        cwd=ROOT,
        env={"PATH": path, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_make_demo_installs_without_node_and_make_test_brings_the_node_clients(
    tmp_path: Path,
) -> None:
    path = _without("node", "npm", tmp_path=tmp_path)
    demo = _make_dry_run("demo", path, tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "pip install" in demo.stdout and "flowstate demo" in demo.stdout
    assert "npm" not in demo.stdout + demo.stderr
    test = _make_dry_run("test", path, tmp_path)
    assert test.returncode == 0, test.stderr
    assert "npm ci --prefix tests/node" in test.stdout and "pytest" in test.stdout


# --- which server --------------------------------------------------------------------------


def _port(settings: Neo4jSettings) -> int:
    port = urlsplit(settings.uri).port
    assert port is not None, settings.uri
    return port


def _unconfigured(settings: Neo4jSettings, data_dir: Path) -> dict[str, str | None]:
    """No FLOWSTATE_NEO4J_URI; the managed server's port is the test server's, its data
    folder one of the test's own (so the test server is nothing FlowState started there)."""
    env: dict[str, str | None] = {
        "FLOWSTATE_NEO4J_URI": None,
        "FLOWSTATE_LOCAL_BOLT_PORT": str(_port(settings)),
        "FLOWSTATE_LOCAL_DATA_DIR": str(data_dir),
        "FLOWSTATE_NEO4J_PASSWORD": None,
    }
    if settings.password:
        env["FLOWSTATE_NEO4J_PASSWORD"] = settings.password.get_secret_value()
    return env


def _invoke(env: dict[str, str | None], *args: str) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture
def remembered(neo4j_settings: Neo4jSettings, namespace: str) -> Iterator[str]:
    """A namespace holding one fact."""
    with Store.connect(neo4j_settings) as store:
        FlowState(store, namespace).remember(
            [{"op": "add", "key": "tea", "category": "preference", "summary": "Likes tea",
              "content": "Green tea, no sugar"}],
            "I like green tea",
        )  # fmt: skip
        yield namespace
        Repository(store, namespace).forget_namespace(force=True)


@pytest.fixture
def stand_in(tmp_path: Path) -> Iterator[Any]:
    """A process recorded as the managed server of a data folder of the test's own, as `flowstate
    neo4j start` records one (its pid, version, ports, data folder): FlowState tells its own
    server by that record and the pid's `--home-dir`, so a stand-in process is enough."""
    started: list[subprocess.Popen[bytes]] = []

    def record(data_dir: Path, bolt_port: int, http_port: int) -> ServerInfo:
        home = data_dir / "neo4j"
        (home / "run").mkdir(parents=True)
        process = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(600)", f"--home-dir={home}"]
        )
        started.append(process)
        info = ServerInfo(process.pid, "5.26.30", bolt_port, http_port, str(home), False, 0.0)
        (home / "run" / "server.json").write_text(json.dumps(asdict(info)))
        return info

    yield record
    for process in started:
        process.kill()
        process.wait()


@pytest.mark.neo4j
def test_a_server_nobody_configured_is_named_once_as_not_started_by_flowstate(
    neo4j_settings: Neo4jSettings, remembered: str, tmp_path: Path
) -> None:
    env = _unconfigured(neo4j_settings, tmp_path / "data")
    done = _invoke(env, "index", "-N", remembered)
    assert done.exit_code == 0, done.output
    assert "r1.tea" in done.stdout
    said = [line for line in done.stderr.splitlines() if UNCONFIGURED in line]
    assert said == [
        f"{UNCONFIGURED}: using the Neo4j that answers at bolt://127.0.0.1:{_port(neo4j_settings)}"
        ", which FlowState did not start; set FLOWSTATE_NEO4J_URI to choose the server."
    ]
    configured = _invoke(
        {**env, "FLOWSTATE_NEO4J_URI": neo4j_settings.uri}, "index", "-N", remembered
    )
    assert configured.exit_code == 0 and configured.stderr == ""


@pytest.mark.neo4j
def test_the_managed_server_is_named_with_its_data_folder(
    neo4j_settings: Neo4jSettings, remembered: str, tmp_path: Path, stand_in: Any
) -> None:
    info = stand_in(tmp_path / "data", _port(neo4j_settings), 7474)
    done = _invoke(_unconfigured(neo4j_settings, tmp_path / "data"), "history", "-N", remembered)
    assert done.exit_code == 0, done.output
    said = [line for line in done.stderr.splitlines() if UNCONFIGURED in line]
    assert said == [
        f"{UNCONFIGURED}: using FlowState's managed local Neo4j 5.26.30 at {info.bolt_uri} "
        f"(data folder {info.data_dir})."
    ]


@pytest.mark.neo4j
def test_the_demo_says_which_server_it_writes_into(
    neo4j_settings: Neo4jSettings, namespace: str, tmp_path: Path
) -> None:
    env = _unconfigured(neo4j_settings, tmp_path / "data")
    try:
        done = _invoke(env, "demo", "-N", namespace, "--json")
    finally:
        with Store.connect(neo4j_settings) as store:
            Repository(store, namespace).forget_namespace(force=True)
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["requests"][-1]["request_id"] == "r8"
    said = [line for line in done.stderr.splitlines() if UNCONFIGURED in line]
    assert len(said) == 1 and "which FlowState did not start" in said[0]


@pytest.mark.neo4j
def test_the_mcp_server_says_which_server_it_uses_in_its_log(
    neo4j_settings: Neo4jSettings, remembered: str, tmp_path: Path
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {k: v for k, v in os.environ.items() if k != "FLOWSTATE_NEO4J_URI"}
    env.update({k: v for k, v in _unconfigured(neo4j_settings, tmp_path / "data").items() if v})
    log = tmp_path / "server.log"

    async def run() -> str:
        params = StdioServerParameters(command=FLOWSTATE, args=["mcp", "-N", remembered], env=env)
        with log.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                index = await session.call_tool("memory_index", {})
                return str(index.model_dump(by_alias=True)["structuredContent"]["text"])

    assert "r1.tea" in asyncio.run(run())
    said = [line for line in log.read_text().splitlines() if UNCONFIGURED in line]
    assert len(said) == 1 and "which FlowState did not start" in said[0], log.read_text()


def test_neo4j_stop_says_which_server_it_stops_before_it_does(
    tmp_path: Path, stand_in: Any
) -> None:
    data_dir = tmp_path / "data"
    env: dict[str, str | None] = {"FLOWSTATE_LOCAL_DATA_DIR": str(data_dir)}
    idle = _invoke(env, "neo4j", "stop")
    assert idle.exit_code == 0
    assert (
        idle.stdout
        == f"Neo4j is not running (data folder {data_dir / 'neo4j'}); nothing to stop.\n"
    )
    info = stand_in(data_dir, 17687, 17474)
    done = _invoke(env, "neo4j", "stop")
    assert done.exit_code == 0, done.output
    first, second = done.stdout.splitlines()
    assert first == (
        f"Stopping the managed Neo4j 5.26.30 (pid {info.pid}; Bolt port 17687, HTTP port 17474; "
        f"data folder {info.data_dir})..."
    )
    assert second.startswith("Neo4j stopped (")
    deadline = time.monotonic() + 10
    while Path(f"/proc/{info.pid}").exists() and time.monotonic() < deadline:
        state = Path(f"/proc/{info.pid}/stat").read_text()
        if state.rsplit(")", 1)[1].split()[0] == "Z":
            break  # stopped; the test (its parent) reaps it
        time.sleep(0.05)
    assert not (data_dir / "neo4j" / "run" / "server.json").exists()


# --- flowstate mcp: its configuration block and its flags ------------------------------------


def _config(env: dict[str, str | None], *flags: str) -> tuple[dict[str, Any], str]:
    done = _invoke(env, "mcp", "-N", "trips", "--print-config", *flags)
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)["mcpServers"]["flowstate"], done.stderr


def test_print_config_writes_the_configured_server_and_never_a_password() -> None:
    server, said = _config(
        {
            "FLOWSTATE_NEO4J_URI": "neo4j+s://abc123.databases.neo4j.io",
            "FLOWSTATE_NEO4J_DATABASE": "memories",
            "FLOWSTATE_NEO4J_USER": None,
            "FLOWSTATE_NEO4J_PASSWORD": "s3cret-pw",
        }
    )
    assert server["env"] == {
        "FLOWSTATE_NEO4J_URI": "neo4j+s://abc123.databases.neo4j.io",
        "FLOWSTATE_NEO4J_DATABASE": "memories",
    }
    assert server["args"] == ["mcp", "--namespace", "trips"]
    assert "s3cret-pw" not in json.dumps(server) + said
    assert "FLOWSTATE_NEO4J_PASSWORD is set but not printed" in said
    in_uri, said = _config(
        {
            "FLOWSTATE_NEO4J_URI": "bolt://bob:hunter2@127.0.0.1:7687",
            "FLOWSTATE_NEO4J_PASSWORD": None,
        }
    )
    assert in_uri["env"]["FLOWSTATE_NEO4J_URI"] == "bolt://bob@127.0.0.1:7687"
    assert "hunter2" not in json.dumps(in_uri) + said and "carries a password" in said
    default, said = _config({"FLOWSTATE_NEO4J_URI": None, "FLOWSTATE_NEO4J_PASSWORD": None})
    assert default["env"] == {"FLOWSTATE_NEO4J_URI": "bolt://127.0.0.1:7687"}
    assert said.startswith(f"{UNCONFIGURED}: the block names bolt://127.0.0.1:7687")


@pytest.mark.parametrize(
    ("env", "flags", "named"),
    [
        ({}, ["--read-only", "--allow-forget"], "--read-only and --allow-forget"),
        (
            {"FLOWSTATE_MCP_ALLOW_FORGET": "true"},
            ["--read-only"],
            "--read-only and FLOWSTATE_MCP_ALLOW_FORGET=true",
        ),
        (
            {"FLOWSTATE_MCP_READ_ONLY": "1"},
            ["--allow-forget", "--print-config"],
            "FLOWSTATE_MCP_READ_ONLY=true and --allow-forget",
        ),
    ],
)
def test_read_only_and_allow_forget_are_refused_together(
    env: dict[str, str | None], flags: list[str], named: str
) -> None:
    base: dict[str, str | None] = {
        "FLOWSTATE_MCP_READ_ONLY": None,
        "FLOWSTATE_MCP_ALLOW_FORGET": None,
    }
    done = _invoke({**base, **env}, "mcp", "-N", "trips", *flags)
    assert done.exit_code == 2, done.output
    assert done.stdout == ""
    assert done.stderr.startswith(f"Error: {named} exclude each other")


# --- help, empty namespaces, counts --------------------------------------------------------

# Runs `flowstate --help` as an install without the agent extra (or without it and the mcp
# extra) sees it: a None in sys.modules is the import system's "not installed" (an import
# raises ImportError, `importlib.util.find_spec` answers None).
_WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None
from flowstate.cli.app import main
main(["--help"], prog_name="flowstate")
"""


def _help_without(*packages: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT, ",".join(packages)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_help_starts_with_what_the_install_can_run() -> None:
    full = _help_without("none")
    assert "Start here:\n    flowstate demo" in full
    mcp_only = _help_without("litellm", "rich")
    start = mcp_only[mcp_only.index("Start here") :].split("\n\n")[0]
    assert "flowstate demo" not in start.replace("demo, run and resume need", "")
    assert "pip install 'flowstate-memory[agent]'" in start
    assert "flowstate mcp -N trips --print-config" in start
    bare = _help_without("litellm", "rich", "mcp")
    start = bare[bare.index("Start here") :].split("\n\n")[0]
    assert "flowstate mcp" not in start and "flowstate-memory[mcp]" in start
    assert "flowstate namespaces" in start


@pytest.mark.neo4j
def test_an_empty_namespace_is_named_with_the_namespaces_that_exist(
    neo4j_settings: Neo4jSettings, cli: Any, tmp_path: Path
) -> None:
    first = f"0_first_hour_{uuid.uuid4().hex[:8]}"  # sorts before the suite's t_... names
    with Store.connect(neo4j_settings) as store:
        FlowState(store, first).remember(
            [{"op": "add", "key": "tea", "category": "preference", "summary": "Likes tea",
              "content": "Green tea"}],
            "I like tea",
        )  # fmt: skip
        try:
            empty = f"t_empty_{uuid.uuid4().hex[:8]}"
            for command in ("history", "index", "export"):
                done = CliRunner().invoke(main, [command], env={"FLOWSTATE_NAMESPACE": empty})
                assert done.exit_code == 2, done.output
                assert done.stderr.startswith(
                    f"Error: namespace {empty!r} (from FLOWSTATE_NAMESPACE) has no requests; "
                    f"namespaces in this database: {first}, "
                ), done.stderr
            if FlowState(store, "default", read_only=True).history():
                pytest.skip("this database's namespace 'default' holds requests")
            done = CliRunner().invoke(main, ["history"], env={"FLOWSTATE_NAMESPACE": None})
            assert done.exit_code == 2
            assert done.stderr.startswith(
                "Error: namespace 'default' (the default: no --namespace/-N given) has no "
                f"requests; namespaces in this database: {first}, "
            ), done.stderr
        finally:
            Repository(store, first).forget_namespace(force=True)


@pytest.mark.neo4j
def test_counts_of_one_read_as_one(cli: Any, remembered: str) -> None:
    listed = cli("namespaces")
    [line] = [ln for ln in listed.stdout.splitlines() if ln.startswith(f"{remembered} ")]
    assert re.sub(r"\s+", " ", line) == (
        f"{remembered} 1 request 1 state 0 observations 0 decisions"
    )
    done = cli("forget", "r1.tea", "-N", remembered, "--yes")
    assert done.exit_code == 0, done.output
    assert re.search(r": 1 node, \d+ relationships? deleted\.$", done.stdout.strip())
    history = cli("history", "-N", remembered)
    assert re.search(r"  1 step  \d+ prompt tokens  ", history.stdout), history.stdout
