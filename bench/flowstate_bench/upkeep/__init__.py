"""`flowstate bench upkeep`: what writing memory costs per request, FlowState beside the real
write paths of Mem0 and Graphiti (`run` puts the pieces together)."""
