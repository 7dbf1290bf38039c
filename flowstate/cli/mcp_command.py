"""`flowstate mcp`: the memory of one namespace as an MCP server for another agent's loop."""

from __future__ import annotations

import click

from flowstate.cli.common import fails_cleanly
from flowstate.cli.connect import namespace_option, open_memory
from flowstate.errors import UsageError


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
@click.option("--read-only", is_flag=True, help="Serve reads only; every write is refused.")
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
@fails_cleanly
def mcp(
    namespace: str,
    transport: str,
    host: str,
    port: int,
    read_only: bool,
    token: str | None,
    draft_ttl: float | None,
) -> None:
    """Serve NAMESPACE's memory over MCP (tools memory_*, resource flowstate://index).

    The host's model emits every step; FlowState checks it with the agent loop's rules,
    stores it, and calls no model. The namespace is fixed here, never by a tool argument.

    \b
    Examples:
      flowstate mcp -N trips
      claude mcp add flowstate -- flowstate mcp -N trips
      flowstate mcp -N trips --transport streamable-http --port 8765 --read-only
    """
    try:
        from flowstate.mcp.server import serve
        from flowstate.mcp.settings import McpSettings
    except ImportError as e:
        raise UsageError(
            f"the MCP server needs the mcp extra: pip install 'flowstate[mcp]' ({e})"
        ) from e
    overrides: dict[str, object] = {}
    if token:
        overrides["token"] = token
    if draft_ttl is not None:
        overrides["draft_ttl_s"] = draft_ttl
    settings = McpSettings.model_validate(McpSettings().model_dump() | overrides)
    with open_memory(namespace, read_only=read_only) as fs:
        serve(fs, settings, transport, host, port)
