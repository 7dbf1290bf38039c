"""The strategies each harness offers on the command line, named apart from the strategies
themselves: `flowstate bench tau --help` lists them without importing any (see
`flowstate_bench.cli`)."""

TAU = ("flowstate", "full", "bm25", "summary")
ARENA_MEMORIES = ("full", "bm25", "summary", "none", "plans")  # the keys of arena.MEMORIES
ARENA = ("flowstate", *ARENA_MEMORIES)
