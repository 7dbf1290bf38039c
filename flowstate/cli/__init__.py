"""The `flowstate` command line. Thin: parse, call the library, print.

The root group lives in `flowstate.cli.app`; this package imports nothing eagerly so that
command families of other distributions (`flowstate_bench.cli`, plugged in through the
`flowstate.commands` entry point) can use `flowstate.cli.common`.
"""
