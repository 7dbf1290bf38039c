"""`flowstate mcp`: the memory of one namespace as an MCP server for another agent's loop."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import click

from flowstate.cli.common import fails_cleanly
from flowstate.cli.connect import namespace_option
from flowstate.errors import UsageError

if TYPE_CHECKING:
    from flowstate.settings import Neo4jSettings


@click.command()
@namespace_option
@click.option(
    "--transport",
    type=click.Choice(["stdio", "streamable-http"]),
    default="stdio",
    show_default=True,
)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP only.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535))
@click.option("--read-only", is_flag=True, help="Serve reads only; write tools are not listed.")
@click.option(
    "--allow-forget", is_flag=True, help="List memory_forget (deletes for good; off by default)."
)
@click.option(
    "--token",
    envvar="FLOWSTATE_MCP_TOKEN",
    help="Bearer token HTTP callers must send; required off loopback.",
)
@click.option(
    "--draft-ttl",
    type=click.FloatRange(min=1),
    default=None,
    help="Seconds before an untouched open request is discarded "
    "[default: FLOWSTATE_MCP_DRAFT_TTL_S or 1800].",
)
@click.option(
    "--print-config",
    is_flag=True,
    help="Print the host configuration block (absolute command path) and exit.",
)
@fails_cleanly
def mcp(
    namespace: str,
    transport: str,
    host: str,
    port: int,
    read_only: bool,
    allow_forget: bool,
    token: str | None,
    draft_ttl: float | None,
    print_config: bool,
) -> None:
    """Serve NAMESPACE's memory over MCP (tools memory_*, resource flowstate://index).

    The host's model emits every step; FlowState checks it with the agent loop's rules,
    stores it, and calls no model. The namespace is fixed here, never by a tool argument.
    The server answers at once and reaches (or starts) Neo4j in the background.

    \b
    Examples:
      flowstate mcp -N trips --print-config
      claude mcp add flowstate -- "$(command -v flowstate)" mcp -N trips
      flowstate mcp -N trips --transport streamable-http --port 8765 --read-only
    """
    from flowstate.models.ids import NAMESPACE_PATTERN

    if not re.fullmatch(NAMESPACE_PATTERN, namespace):
        raise UsageError(
            f"invalid namespace {namespace[:60]!r}: use 1-128 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    from flowstate.mcp.settings import McpSettings  # pydantic only: no mcp extra needed

    # A flag given turns its setting on; without it, FLOWSTATE_MCP_READ_ONLY and
    # FLOWSTATE_MCP_ALLOW_FORGET decide.
    overrides: dict[str, object] = {"namespace": namespace}
    if read_only:
        overrides["read_only"] = True
    if allow_forget:
        overrides["allow_forget"] = True
    if token:
        overrides["token"] = token
    if draft_ttl is not None:
        overrides["draft_ttl_s"] = draft_ttl
    settings = McpSettings.model_validate(McpSettings().model_dump() | overrides)
    if settings.read_only and settings.allow_forget:
        named = [
            flag if given else f"FLOWSTATE_MCP_{flag[2:].replace('-', '_').upper()}=true"
            for flag, given in (("--read-only", read_only), ("--allow-forget", allow_forget))
        ]
        raise UsageError(
            f"{named[0]} and {named[1]} exclude each other: a read-only server never forgets. "
            "Serve reads with one server and forgetting with another."
        )
    if print_config:
        from flowstate.settings import Neo4jSettings

        asked = (("--read-only", settings.read_only), ("--allow-forget", settings.allow_forget))
        flags = [flag for flag, on in asked if on]
        database = Neo4jSettings()
        click.echo(host_config(namespace, flags, database))
        for note in host_config_notes(database):
            click.echo(note, err=True)
        return
    try:
        from flowstate.mcp import logs
        from flowstate.mcp.memory import Memory
        from flowstate.mcp.server import serve
    except ImportError as e:
        raise UsageError(
            f"the MCP server needs the mcp extra: pip install 'flowstate-memory[mcp]' ({e})"
        ) from e
    logs.configure()

    def open_fs(say: logs.Say):  # noqa: ANN202
        from flowstate.cli.connect import open_memory

        return open_memory(namespace, read_only=settings.read_only, say=say)

    serve(Memory(open_fs, logs.say), settings, transport, host, port)


def host_config(namespace: str, flags: list[str], database: Neo4jSettings) -> str:
    """The `mcpServers` block for Claude Desktop, Cursor and the like, with this executable's
    absolute path: hosts start servers without the user's PATH (a venv is never on it). The
    server is the one configured here (FLOWSTATE_NEO4J_URI and its user and database), so the
    host's server writes where this shell's commands do; a password is never printed."""
    command = shutil.which("flowstate") or sys.argv[0]
    command = str(Path(command).resolve())
    env = {"FLOWSTATE_NEO4J_URI": without_password(database.uri)}
    for name in ("user", "database"):
        if name in database.model_fields_set:
            env[f"FLOWSTATE_NEO4J_{name.upper()}"] = getattr(database, name)
    block = {
        "mcpServers": {
            "flowstate": {
                "command": command,
                "args": ["mcp", "--namespace", namespace, *flags],
                "env": env,
            }
        }
    }
    return json.dumps(block, indent=2)


def host_config_notes(database: Neo4jSettings) -> list[str]:
    """What the block leaves to the reader, said on stderr."""
    notes = []
    if not database.configured:
        notes.append(
            f"No Neo4j configured (FLOWSTATE_NEO4J_URI): the block names {database.uri}; "
            "set FLOWSTATE_NEO4J_URI first to name another server."
        )
    if database.password is not None:
        notes.append(
            "FLOWSTATE_NEO4J_PASSWORD is set but not printed: add it to the block's env yourself."
        )
    if without_password(database.uri) != database.uri:
        notes.append(
            "FLOWSTATE_NEO4J_URI carries a password, left out of the block: add it to the "
            "block's env yourself (FLOWSTATE_NEO4J_PASSWORD)."
        )
    return notes


def without_password(uri: str) -> str:
    """`uri` with any password in its user part left out (`bolt://bob@host`)."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    host = parts.netloc.rpartition("@")[2]
    user = f"{parts.username}@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=user + host))
