"""Spare ports and a data folder of its own for each managed server a test starts."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from flowstate.settings import LocalServerSettings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def local_settings(tmp_path: Path, **overrides: Any) -> LocalServerSettings:
    """Settings for a server on free ports under tmp_path; the jar cache stays shared."""
    values: dict[str, Any] = {
        "data_dir": tmp_path / "data",
        "bolt_port": free_port(),
        "http_port": free_port(),
    }
    return LocalServerSettings(**{**values, **overrides})
