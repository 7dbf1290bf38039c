"""Is a pid our Neo4j server, and waiting for it to go. Linux /proc first, POSIX fallback."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path


def is_alive(pid: int) -> bool:
    # Reap it if it is our own child, so that a dead server is not kept as a zombie.
    with contextlib.suppress(ChildProcessError, OSError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    stat = Path(f"/proc/{pid}/stat")
    if stat.parent.parent.is_dir() and Path("/proc/self").exists():
        try:
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_our_server(pid: int, home: Path) -> bool:
    """True when pid is alive and is the Neo4j started with this home folder (not a reused pid)."""
    if not is_alive(pid):
        return False
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.exists():
        return True  # no /proc: trust the pid
    try:
        args = cmdline.read_bytes().split(b"\0")
    except OSError:
        return False
    return f"--home-dir={home}".encode() in args


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not is_alive(pid):
            return True
        time.sleep(0.1)
    return not is_alive(pid)
