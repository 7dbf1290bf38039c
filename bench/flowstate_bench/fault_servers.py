"""Spare Neo4j servers for fault runs: ports and a data folder of their own.

Faults (SIGKILL, a stop in the middle of a request) are only ever injected into a server
started here, never into the one that tests, demos and other runs share.

    with spare_server(tmp / "kills") as server:
        kill(server)
        server.start()   # same data folder: Neo4j recovers from its transaction log
"""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from flowstate.errors import LocalServerError
from flowstate.local import process
from flowstate.local.probe import port_is_free
from flowstate.local.server import LocalServer
from flowstate.settings import LocalServerSettings, Neo4jSettings


def free_ports(n: int = 2) -> list[int]:
    """`n` distinct loopback ports nobody listens on (held together so they differ)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]


def spare_settings(data_dir: Path, heap: str = "512m") -> LocalServerSettings:
    bolt, http = free_ports(2)
    return LocalServerSettings(data_dir=data_dir, bolt_port=bolt, http_port=http, heap=heap)


@contextmanager
def spare_server(data_dir: Path, heap: str = "512m") -> Iterator[LocalServer]:
    """A started spare server, stopped on the way out whatever happened to it meanwhile."""
    server = LocalServer(spare_settings(data_dir, heap))
    try:
        server.start()
        yield server
    finally:
        server.stop()


def client_settings(server: LocalServer, retry_time_s: float = 1.0) -> Neo4jSettings:
    """Settings that give up quickly, so a dead server is reported in seconds, not minutes."""
    return Neo4jSettings(
        uri=server.settings.bolt_uri, retry_time_s=retry_time_s, connect_timeout_s=2.0
    )


def kill(server: LocalServer) -> int:
    """SIGKILL the server (no shutdown, no checkpoint) and wait until it is gone; its pid."""
    info = server.info()
    if info is None:
        raise LocalServerError(f"no spare server runs in {server.home} to kill")
    os.kill(info.pid, signal.SIGKILL)
    if not process.wait_gone(info.pid, 30.0):
        raise LocalServerError(f"Neo4j (pid {info.pid}) survived SIGKILL")
    return info.pid


def restart(server: LocalServer, timeout: float = 90.0) -> float:
    """Start the server again on its data folder; the seconds it took.

    After a kill, sockets still open in some client (an idle pooled connection) keep the
    dead server's port bound on the server side until the kernel times them out (up to
    tcp_fin_timeout, 60 s): start() would refuse the port, so wait for it first.
    """
    began = time.monotonic()
    ports = (server.settings.bolt_port, server.settings.http_port)
    while not all(port_is_free(p) for p in ports):
        if time.monotonic() - began > timeout:
            raise LocalServerError(f"ports {ports} still busy {timeout:.0f}s after a stop")
        time.sleep(0.2)
    server.start()
    return time.monotonic() - began


def warm_up(server: LocalServer) -> None:
    """Apply the schema and run the commit and read-back queries once in a scratch
    namespace, so that a fresh server's query planning is not paid inside a scenario."""
    from flowstate.store import Repository, Store
    from flowstate_bench.synthetic import BundleShape, request_bundle

    with Store.connect(client_settings(server, retry_time_s=5.0)) as store:
        repo = Repository(store, "warm_up")
        repo.commit(request_bundle(repo.namespace, 1, BundleShape(4, 4, 2, 2)))
        repo.bundles(), repo.counts(), repo.history()
        repo.forget_namespace(force=True)
