"""The strategies each harness offers on the command line, named apart from the strategies
themselves: `flowstate bench tau --help` lists them without importing any (see
`flowstate_bench.cli`). The seam and the harnesses take their names from here, and the
embedding model's default too."""

LOCAL_EMBEDDING = "flowstate-embed/hash-256"  # `flowstate_bench.embedding`'s local model

FLOWSTATE_VARIANTS = ("flowstate", "flowstate_no_psa", "flowstate_no_isu")
# The memories of `flowstate_bench.baselines`, run the same way by both harnesses.
SHARED_MEMORIES = ("embedding", "reasoningbank", "mem0-style")
ALIASES = {"summary": "zipact"}  # the rolling summary's earlier name, still accepted

TAU = (*FLOWSTATE_VARIANTS, "full", "bm25", "zipact", "zipact_bm25", *SHARED_MEMORIES)
TAU_DEFAULT = ("flowstate", "full", "bm25", "zipact")
ARENA_MEMORIES = ("full", "bm25", "zipact", "zipact_bm25", "none", "plans")  # arena.MEMORIES
ARENA = (*FLOWSTATE_VARIANTS, *ARENA_MEMORIES, *SHARED_MEMORIES)
