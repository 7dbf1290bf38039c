"""Published MemoryArena figures (arXiv 2602.16313 v2, Table 3), shown beside ours and always
marked as published. Task agent gpt-5-mini (labelled GPT-5.1-mini) unless the row names one."""

from __future__ import annotations

COLUMNS = (
    "shop_sr", "shop_ps", "travel_sr", "travel_ps", "travel_sps",
    "math_sr", "math_ps", "phys_sr", "phys_ps", "avg_sr",
)  # fmt: skip

# Avg SR in the paper also averages Progressive Search, which this harness does not run.
TABLE_3: dict[str, tuple[float, ...]] = {
    "Long ctx GPT-5.1-mini": (0.01, 0.58, 0.00, 0.00, 0.52, 0.21, 0.30, 0.50, 0.59, 0.16),
    "Long ctx Gemini-3-Flash": (0.12, 0.76, 0.00, 0.01, 0.62, 0.17, 0.30, 0.60, 0.61, 0.19),
    "Long ctx Claude-Sonnet-4.5": (0.12, 0.79, 0.00, 0.06, 0.44, 0.20, 0.25, 0.45, 0.59, 0.16),
    "Long ctx GPT-4.1-mini": (0.00, 0.43, 0.00, 0.00, 0.19, 0.13, 0.27, 0.30, 0.45, 0.09),
    "Letta": (0.00, 0.50, 0.00, 0.00, 0.35, 0.11, 0.26, 0.45, 0.65, 0.14),
    "Mem0": (0.00, 0.45, 0.00, 0.00, 0.24, 0.18, 0.28, 0.25, 0.43, 0.13),
    "Mem0-g": (0.00, 0.43, 0.00, 0.00, 0.24, 0.19, 0.32, 0.25, 0.50, 0.12),
    "Mirix": (0.00, 0.41, 0.00, 0.00, 0.36, 0.18, 0.28, 0.35, 0.50, 0.13),
    "ReasoningBank": (0.00, 0.27, 0.00, 0.00, 0.00, 0.13, 0.27, 0.35, 0.53, 0.12),
    "BM25": (0.00, 0.56, 0.00, 0.01, 0.45, 0.18, 0.29, 0.40, 0.58, 0.17),
    "Text-Embedding-3-Small": (0.00, 0.55, 0.00, 0.01, 0.50, 0.25, 0.33, 0.50, 0.68, 0.20),
    "MemoRAG": (0.00, 0.54, 0.00, 0.03, 0.50, 0.24, 0.30, 0.40, 0.55, 0.17),
    "GraphRAG": (0.00, 0.52, 0.00, 0.01, 0.51, 0.23, 0.31, 0.60, 0.63, 0.17),
}

# What the FlowState paper reports for MemoryArena (main model DeepSeek-V4-Flash).
FLOWSTATE_CLAIMS = (
    "shopping PS 42.89% (+11.78 pp over the strongest memory baseline)",
    "travel 12.57% (+5.61 pp over the best baseline; most likely PS)",
    "best math PS; best physics SR and PS",
    "average SR +4.55 pp over full context with 43.2% fewer tokens",
    "highest nAUC in shopping, travel and formal reasoning",
)
