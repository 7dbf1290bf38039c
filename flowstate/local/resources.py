"""Locating files shipped beside the code: in a wheel under flowstate/_local, in a checkout
under docker/local."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def local_server_file(name: str) -> Path:
    for folder in (_PACKAGE / "_local", _PACKAGE.parent / "docker" / "local"):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{name} is missing from this FlowState installation")
