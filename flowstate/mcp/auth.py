"""Who may talk to the HTTP transport: loopback by default; anywhere else only with a bearer
token, which, once set, every request must carry."""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from flowstate.errors import UsageError

Scope = dict[str, Any]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name that may resolve anywhere


def check_binding(host: str, token: str | None) -> None:
    """Refuse to serve off loopback without a token, before anything listens."""
    if not is_loopback(host) and not token:
        raise UsageError(
            f"--host {host} is not loopback: set --token or FLOWSTATE_MCP_TOKEN so that only "
            "callers with the token are served"
        )


class BearerToken:
    """ASGI middleware: 401 for any HTTP request without `Authorization: Bearer <token>`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = token.encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._authorised(scope):
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"text/plain"),
                        (b"www-authenticate", b"Bearer"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
            return
        await self.app(scope, receive, send)

    def _authorised(self, scope: Scope) -> bool:
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, credentials = given.partition(b" ")
        # The scheme name is case-insensitive (RFC 7235); the token is compared in constant time.
        return scheme.lower() == b"bearer" and hmac.compare_digest(
            credentials.strip(), self._expected
        )
