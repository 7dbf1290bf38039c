"""The root `flowstate` group; each command family lives in its own module."""

from __future__ import annotations

import click

from flowstate.cli.demo_command import demo
from flowstate.cli.mcp_command import mcp
from flowstate.cli.memory_commands import COMMANDS
from flowstate.cli.neo4j_commands import neo4j
from flowstate.cli.plugins import PluginGroup
from flowstate.cli.request_commands import COMMANDS as REQUEST_COMMANDS
from flowstate.cli.safety_commands import COMMANDS as SAFETY_COMMANDS
from flowstate.cli.show_command import show


@click.group(cls=PluginGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="flowstate-memory")
def main() -> None:
    """FlowState: the agent's execution state, kept in Neo4j, is its memory.

    \b
    Start here:
      flowstate demo            # eight requests of a trip, offline
      flowstate index -N demo   # what the model sees of the past
    """


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
