"""flowstate-memory-bench: the benchmarks behind `flowstate bench` (engine speed, token economy,
faults, tau-bench), a distribution of its own that plugs into the `flowstate` command line
through the `flowstate.commands` entry point."""
