"""The embedded default: with no Neo4j configured and none on the default port, start ours.

Whenever the server was not configured, the caller is told which one it gets: a command must
never write into a database nobody pointed it at without saying so.
"""

from __future__ import annotations

from collections.abc import Callable

from flowstate.local.probe import bolt_answers
from flowstate.local.server import LocalServer, ServerInfo
from flowstate.settings import LocalServerSettings, Neo4jSettings

UNCONFIGURED = "No Neo4j configured (FLOWSTATE_NEO4J_URI)"


def resolve_database(
    neo4j: Neo4jSettings, local: LocalServerSettings, say: Callable[[str], None]
) -> Neo4jSettings:
    """The settings to connect with, starting the managed local server when nothing else is there.

    A configured URI is used as it is, even when it does not answer: the caller then gets the
    connection error for the server it asked for, not a surprise local one. Otherwise `say`
    hears once which server is used, and whether FlowState started it.
    """
    if neo4j.configured:
        return neo4j
    local_uri = neo4j.model_copy(update={"uri": local.bolt_uri})
    server = LocalServer(local)
    if bolt_answers(local.bolt_port):
        say(found_text(server.info(), local))
        return local_uri
    say(f"{UNCONFIGURED} and none on port {local.bolt_port}: "
        f"starting the managed local server in {server.home}...")  # fmt: skip
    result = server.start()
    say(f"Local Neo4j {result.info.version} ready at {result.info.bolt_uri} "
        f"({result.seconds:.1f}s; Browser at {result.info.browser_url}).")  # fmt: skip
    return local_uri


def found_text(info: ServerInfo | None, local: LocalServerSettings) -> str:
    """What is said of a server that already answers on the managed server's port."""
    if info is not None and info.bolt_port == local.bolt_port:
        return (
            f"{UNCONFIGURED}: using FlowState's managed local Neo4j {info.version} at "
            f"{info.bolt_uri} (data folder {info.data_dir})."
        )
    return (
        f"{UNCONFIGURED}: using the Neo4j that answers at {local.bolt_uri}, which FlowState "
        "did not start; set FLOWSTATE_NEO4J_URI to choose the server."
    )
