"""The loop: the step driver without I/O, and the shells that do its I/O (agent, async agent,
session)."""
