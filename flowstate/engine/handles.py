"""Request handles: the capability that says a client holds a request.

`begin` mints a handle and gives it to the client once; only its hash is kept (with the draft,
then with the committed request), so neither the database nor an export can hand it out.
Every later call on the request presents the handle; ids are sequential and guessable, a
handle is not (192 random bits). A host over a stateless transport passes it as a tool
argument, as the MCP specification recommends for server-minted handles.

>>> handle, digest = mint()
>>> matches(handle, digest), matches("fsh_guess", digest), matches(handle, None)
(True, False, False)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from flowstate.errors import WrongHandle

PREFIX = "fsh_"  # recognisable in logs and configs; never the secret part


def mint() -> tuple[str, str]:
    """A new handle and its hash (what is stored)."""
    handle = PREFIX + secrets.token_urlsafe(24)
    return handle, digest_of(handle)


def digest_of(handle: str) -> str:
    return hashlib.sha256(handle.encode("utf-8", "surrogatepass")).hexdigest()


def matches(handle: str | None, digest: str | None) -> bool:
    """Whether `handle` is the one whose hash is `digest` (in constant time); a request with
    no hash (run by an agent, or begun before handles) matches no handle."""
    if not handle or not digest:
        return False
    return hmac.compare_digest(digest_of(handle), digest)


def refusal(request_id: str) -> WrongHandle:
    """The refusal of a call on `request_id` without its handle."""
    return WrongHandle(
        f"request {request_id} is not open to this handle: pass the handle its begin returned "
        "(only the client that began a request acts on it). Nothing was done"
    )
