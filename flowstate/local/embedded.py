"""The embedded default: with no Neo4j configured and none on the default port, start ours."""

from __future__ import annotations

from collections.abc import Callable

from flowstate.local.probe import bolt_answers
from flowstate.local.server import LocalServer
from flowstate.settings import LocalServerSettings, Neo4jSettings


def resolve_database(
    neo4j: Neo4jSettings, local: LocalServerSettings, say: Callable[[str], None]
) -> Neo4jSettings:
    """The settings to connect with, starting the managed local server when nothing else is there.

    A configured URI is used as it is, even when it does not answer: the caller then gets the
    connection error for the server it asked for, not a surprise local one.
    """
    if neo4j.configured:
        return neo4j
    local_uri = neo4j.model_copy(update={"uri": local.bolt_uri})
    if bolt_answers(local.bolt_port):
        return local_uri
    say(f"No Neo4j configured (FLOWSTATE_NEO4J_URI) and none on port {local.bolt_port}: "
        "starting the managed local server...")  # fmt: skip
    result = LocalServer(local).start()
    say(f"Local Neo4j {result.info.version} ready at {result.info.bolt_uri} "
        f"({result.seconds:.1f}s; Browser at {result.info.browser_url}).")  # fmt: skip
    return local_uri
