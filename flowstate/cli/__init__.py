"""The `flowstate` command line. Thin: parse, call the library, print."""

from flowstate.cli.app import main

__all__ = ["main"]
