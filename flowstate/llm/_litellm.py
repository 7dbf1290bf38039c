"""The one place litellm is imported. Import this module lazily, inside functions:
importing litellm takes seconds, and `import flowstate` must stay fast.
"""

import os

# Without this litellm fetches its model cost map from GitHub at import; we run offline and
# the copy bundled with litellm is good enough. setdefault: a user's explicit choice wins.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from flowstate.errors import UsageError  # noqa: E402

AGENT_EXTRA = "pip install 'flowstate-memory[agent]'"

try:
    import litellm  # noqa: E402
except ImportError as e:  # the memory and the MCP server run without it; model calls do not
    raise UsageError(
        f"calling a model needs litellm, which the agent extra installs: {AGENT_EXTRA} ({e})"
    ) from e

# litellm prints help banners to stdout when a call fails; our errors carry the detail, and
# stdout belongs to the CLI (whose --json output they would corrupt).
litellm.suppress_debug_info = True

__all__ = ["litellm"]
