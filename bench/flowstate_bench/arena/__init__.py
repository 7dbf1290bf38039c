"""MemoryArena: interdependent multi-session tasks (shopping bundles, group travel, formal
reasoning) with FlowState and the memories it is compared with."""
