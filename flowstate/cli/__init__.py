"""The `flowstate` command line. Thin: parse, call the library, print.

The root group lives in `flowstate.cli.app`; this package imports nothing eagerly so that
command families of other distributions (`flowstate_bench.cli`, plugged in through the
`flowstate.commands` entry point) can use `flowstate.cli.plugins`.

Start-up time: a command module declares its command with click alone, and imports the
library (pydantic models, the engine, the Neo4j driver, litellm) inside the function that
runs it. `--help` on any command, which loads every command module to list them, thus stays
near the cost of importing click (`tests/cli/test_cli_imports.py` holds that), and a command
imports only what it uses: the memory commands never load litellm.
"""
