"""The `flowstate` command line. Thin: parse, call the library, print.

The root group lives in `flowstate.cli.app`; this package imports nothing eagerly so that
command modules elsewhere (e.g. `flowstate.bench.cli`) can use `flowstate.cli.common`.
"""
