"""The root `flowstate` group; each command family lives in its own module."""

from __future__ import annotations

from importlib.util import find_spec

import click

from flowstate.cli.demo_command import demo
from flowstate.cli.mcp_command import mcp
from flowstate.cli.memory_commands import COMMANDS
from flowstate.cli.neo4j_commands import neo4j
from flowstate.cli.plugins import PluginGroup
from flowstate.cli.request_commands import COMMANDS as REQUEST_COMMANDS
from flowstate.cli.safety_commands import COMMANDS as SAFETY_COMMANDS
from flowstate.cli.show_command import show


class Main(PluginGroup):
    """The root group, whose help starts with what this install can run."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.help = f"{INTRO}\n\n{start_here()}"
        super().format_help_text(ctx, formatter)


INTRO = "FlowState: the agent's execution state, kept in Neo4j, is its memory."
AGENT_EXTRA = "pip install 'flowstate-memory[agent]'"


def start_here() -> str:
    """The first commands to try, from the extras installed: the demo needs the agent extra
    (litellm, rich), the MCP server the mcp extra. Found without importing either."""
    if find_spec("litellm") and find_spec("rich"):
        return (
            "\b\nStart here:\n"
            "  flowstate demo            # eight requests of a trip, offline\n"
            "  flowstate index -N demo   # what the model sees of the past"
        )
    if find_spec("mcp"):
        return (
            "\b\nStart here (this install serves memory over MCP; demo, run and resume need "
            f"{AGENT_EXTRA}):\n"
            "  flowstate mcp -N trips --print-config   # the block for your MCP host\n"
            "  flowstate namespaces                    # what the database holds\n"
            "  flowstate index -N trips                # what the model sees of the past"
        )
    return (
        "\b\nStart here (this install has the memory commands; demo, run and resume need "
        f"{AGENT_EXTRA}, the MCP server pip install 'flowstate-memory[mcp]'):\n"
        "  flowstate namespaces         # what the database holds\n"
        "  flowstate index -N trips     # what the model sees of the past"
    )


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="flowstate-memory")
def main() -> None:
    """FlowState: the agent's execution state, kept in Neo4j, is its memory."""


for command in [
    demo,
    *REQUEST_COMMANDS,
    show,
    *COMMANDS,
    *SAFETY_COMMANDS,
    mcp,
    neo4j,
]:
    main.add_command(command)
