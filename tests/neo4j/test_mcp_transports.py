"""`flowstate mcp` as a real subprocess, over stdio and streamable HTTP on loopback."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from flowstate.store import Repository, Store
from tests.neo4j.mcp_host import assert_same_as_the_agent_loop, book_a_hotel, first_requests

pytestmark = pytest.mark.neo4j

FLOWSTATE = str(Path(sys.executable).parent / "flowstate")
TOKEN = "s3cret-token"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server(repo: Repository) -> Iterator[str]:
    """`flowstate mcp` over streamable HTTP on loopback, with a token; its URL."""
    port = _free_port()
    env = {**os.environ, "FLOWSTATE_MCP_TOKEN": TOKEN}
    args = ["mcp", "-N", repo.namespace, "--transport", "streamable-http", "--port", str(port)]
    process = subprocess.Popen([FLOWSTATE, *args], env=env, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert process.poll() is None, process.stderr and process.stderr.read()
                assert time.monotonic() < deadline, "the server did not listen"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_over_stdio(store: Store, repo: Repository, other_repo: Repository) -> None:
    first_requests(store, repo.namespace, other_repo.namespace)
    params = StdioServerParameters(
        command=FLOWSTATE, args=["mcp", "-N", repo.namespace], env=dict(os.environ)
    )

    async def run() -> str:
        async with Client(params) as client:
            return await book_a_hotel(client)

    assert asyncio.run(run()) == "r2"
    assert_same_as_the_agent_loop(store, repo, other_repo)


def test_over_streamable_http_with_a_token(
    store: Store, repo: Repository, other_repo: Repository, http_server: str
) -> None:
    first_requests(store, repo.namespace, other_repo.namespace)

    async def run() -> str:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(http_server, http_client=http)) as client,
        ):
            return await book_a_hotel(client)

    assert asyncio.run(run()) == "r2"
    assert_same_as_the_agent_loop(store, repo, other_repo)


def test_an_unauthenticated_http_call_is_refused(http_server: str) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        answer = httpx2.post(http_server, json=initialize, headers=headers, timeout=30)
        assert answer.status_code == 401


def test_http_off_loopback_needs_a_token(repo: Repository) -> None:
    env = {k: v for k, v in os.environ.items() if k != "FLOWSTATE_MCP_TOKEN"}
    args = ["mcp", "-N", repo.namespace, "--transport", "streamable-http", "--host", "0.0.0.0"]
    done = subprocess.run([FLOWSTATE, *args], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not loopback" in done.stderr
