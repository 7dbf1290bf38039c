"""Low-level checks on loopback ports: is it free, does Bolt answer, does HTTP answer.

The Bolt check is a bare protocol handshake, so the local-server code needs no driver.
"""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

_BOLT_MAGIC = b"\x60\x60\xb0\x17"
# Proposals: 5.0-5.4 (range 4 below 5.4), then 4.4; the server answers with the one it takes.
_BOLT_PROPOSALS = b"\x00\x04\x04\x05" + b"\x00\x00\x04\x04" + b"\x00" * 8


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def bolt_answers(port: int, host: str = "127.0.0.1", timeout: float = 2.0) -> bool:
    """True when a Bolt server on host:port completes the version handshake."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(_BOLT_MAGIC + _BOLT_PROPOSALS)
            reply = sock.recv(4)
    except OSError:
        return False
    return len(reply) == 4 and reply != b"\x00\x00\x00\x00"


def http_get(url: str, timeout: float = 2.0) -> tuple[int, bytes] | None:
    """Status and body of a GET, or None when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, b""
    except (OSError, ValueError):
        return None
