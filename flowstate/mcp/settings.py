"""What an MCP server is tuned by: FLOWSTATE_MCP_* variables (or the command's options)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from flowstate.settings import EnvSettings


class McpSettings(EnvSettings):
    model_config = SettingsConfigDict(env_prefix="FLOWSTATE_MCP_", extra="ignore")

    # The namespace served; bound at start, never taken from a tool argument.
    namespace: str = Field("default", exclude=True)
    # Serve the reads only: the write tools are not even listed.
    read_only: bool = False
    # List memory_forget (deleting for good is never offered unless asked for at start).
    allow_forget: bool = False
    # Required to serve HTTP anywhere but loopback; checked on every HTTP request when set.
    token: SecretStr | None = None
    # An open request nobody has touched for this long is discarded, so the drafts of hosts
    # that walked away do not pile up (a live writer's request is never taken).
    draft_ttl_s: float = Field(1_800.0, gt=0)
    # Every tool result is cut into pages of at most this many characters: hosts cap a tool
    # result near 25k tokens, and 40k characters stay well below that in any tokenizer.
    page_chars: int = Field(40_000, ge=1_000, le=80_000)
    # Once connected, rehearse every tool once in a rolled-back transaction (see
    # flowstate.mcp.warmup), so that no first call pays Neo4j's planning of its statements.
    warm_up: bool = True
