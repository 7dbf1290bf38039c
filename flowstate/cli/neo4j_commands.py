"""`flowstate neo4j ...`: the managed local Neo4j."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from flowstate.cli.common import EXIT_FAILURE, emit, fails_cleanly
from flowstate.errors import UsageError

if TYPE_CHECKING:
    from flowstate.local.server import LocalServer

# --- flowstate neo4j -------------------------------------------------------------------


def _local(
    bolt_port: int | None = None, http_port: int | None = None, version: str | None = None
) -> LocalServer:
    from flowstate.local.server import LocalServer
    from flowstate.settings import LocalServerSettings

    chosen = (("bolt_port", bolt_port), ("http_port", http_port), ("neo4j_version", version))
    overrides: dict[str, Any] = {k: v for k, v in chosen if v}
    return LocalServer(LocalServerSettings(**overrides))


@click.group()
def neo4j() -> None:
    """The managed local Neo4j (Community 5.26 LTS or 2026.x from Maven Central; no Docker).

    \b
    Example:
      flowstate neo4j start && flowstate neo4j status
    """


@neo4j.command()
@click.option("--password", default=None, help="Turn auth on with this password (user neo4j).")
@click.option("--bolt-port", type=int, default=None, help="Bolt port (default 7687).")
@click.option("--http-port", type=int, default=None, help="HTTP/Browser port (default 7474).")
@click.option(
    "--version",
    default=None,
    help="Neo4j version or line: lts / 5.26 (default, Java 17 or 21), latest / 2026 "
    "(Java 21 or 25), or a full version such as 2026.08.1.",
)
@fails_cleanly
def start(
    password: str | None, bolt_port: int | None, http_port: int | None, version: str | None
) -> None:
    """Start the server in the background; return once Bolt answers.

    The first start of a version downloads its jars from Maven Central into the cache folder.

    \b
    Examples:
      flowstate neo4j start
      flowstate neo4j start --password s3cret --bolt-port 7688 --http-port 7475
      flowstate neo4j start --version 2026 --bolt-port 7697 --http-port 7477
    """
    server = _local(bolt_port, http_port, version)
    if server.info() is None and not server.settings.classpath_file.exists():
        click.echo(
            f"First start of Neo4j {server.settings.neo4j_version}: downloading it from "
            "Maven Central (about 170-200 MB)..."
        )
    result = server.start(password=password)
    info = result.info
    if result.already_running:
        click.echo(f"Neo4j is already running (pid {info.pid}) at {info.bolt_uri}; nothing to do.")
        return
    click.echo(
        f"Neo4j {info.version} started in {result.seconds:.1f}s (pid {info.pid}).\n"
        f"  Bolt:    {info.bolt_uri}\n  Browser: {info.browser_url}\n  Data:    {info.data_dir}"
    )


@neo4j.command()
@fails_cleanly
def stop() -> None:
    """Stop the managed server cleanly (SIGTERM, wait, SIGKILL only if it hangs).

    Says first which server it stops: its pid, ports and data folder (FLOWSTATE_LOCAL_DATA_DIR).

    \b
    Example:
      flowstate neo4j stop
    """
    server = _local()
    info = server.info()
    if info is None:
        click.echo(f"Neo4j is not running (data folder {server.home}); nothing to stop.")
        return
    # Said first: another process may be using this server (it answers whoever connects).
    click.echo(
        f"Stopping the managed Neo4j {info.version} (pid {info.pid}; Bolt port "
        f"{info.bolt_port}, HTTP port {info.http_port}; data folder {info.data_dir})..."
    )
    result = server.stop()
    if not result.was_running:
        click.echo("Neo4j had stopped meanwhile; nothing to stop.")
    elif result.forced:
        click.echo(f"Neo4j did not stop in time and was killed ({result.seconds:.1f}s).")
    else:
        click.echo(f"Neo4j stopped ({result.seconds:.1f}s).")


@neo4j.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@fails_cleanly
def status(as_json: bool) -> None:
    """Show version, pid, ports and data folder; exit 1 when not running.

    \b
    Example:
      flowstate neo4j status --json
    """
    server = _local()
    info = server.info()
    if info is None:
        emit(
            {"running": False, "data_dir": str(server.home)},
            as_json,
            f"Neo4j is not running (data folder {server.home}).",
        )
        sys.exit(EXIT_FAILURE)
    data = {"running": True, **info.__dict__, "browser_url": info.browser_url}
    human = (
        f"Neo4j {info.version} running (pid {info.pid}), auth {'on' if info.auth else 'off'}\n"
        f"  Bolt:    {info.bolt_uri}\n  Browser: {info.browser_url}\n  Data:    {info.data_dir}"
    )
    emit(data, as_json, human)


@neo4j.command()
@click.option("-n", "--lines", default=50, show_default=True, help="How many lines.")
@fails_cleanly
def logs(lines: int) -> None:
    """Show the end of the server log.

    \b
    Example:
      flowstate neo4j logs -n 100
    """
    server = _local()
    tail = server.log_tail(lines)
    if not tail:
        raise UsageError(f"No server log yet at {server.console_log}; start the server first.")
    click.echo(tail)
