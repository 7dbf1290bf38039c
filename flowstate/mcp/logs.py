"""The server's log on stderr: one line per event (a host shows stderr as it comes, and a
refused step is an everyday event, not a traceback). stdout is the stdio transport's."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

Say = Callable[[str], None]

LOGGER = "flowstate.mcp"
MAX_LINE = 500


class OneLine(logging.Formatter):
    """`time level name: message`, newlines escaped, long messages cut, tracebacks folded."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        message = message.replace("\r", "\\r").replace("\n", "\\n")
        if len(message) > MAX_LINE:
            message = f"{message[:MAX_LINE]}... ({len(message) - MAX_LINE} more characters)"
        stamp = self.formatTime(record, "%H:%M:%S")
        return f"{stamp} {record.levelname.lower()} {record.name}: {message}"


def configure(level: int = logging.INFO) -> logging.Logger:
    """Route every logger (the SDK's, uvicorn's, ours) through one one-line handler on stderr,
    before the SDK would install its multi-line one; the SDK's own chatter only from WARNING."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    logging.captureWarnings(True)  # a library's warning is one line too, not two
    for noisy in ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # The driver warns at every retry of a transaction; the call's own error says it once.
    logging.getLogger("neo4j").setLevel(logging.ERROR)
    ours = logging.getLogger(LOGGER)
    ours.setLevel(level)
    return ours


def say(message: str) -> None:
    """One line from the server about itself (connecting, the local Neo4j starting...)."""
    logging.getLogger(LOGGER).info(message)
