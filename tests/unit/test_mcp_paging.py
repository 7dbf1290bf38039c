"""Bounded MCP results and the HTTP binding rule."""

from __future__ import annotations

import pytest

from flowstate.compact.paging import page_of
from flowstate.errors import UsageError
from flowstate.mcp.auth import check_binding, is_loopback


def test_pages_cover_the_text_and_stay_within_the_size() -> None:
    text = "\n".join(f"line {i} " + "y" * (i % 50) for i in range(500)) + "\n" + "z" * 2_500
    first = page_of(text, 1, 1_000)
    pages = [page_of(text, n, 1_000) for n in range(1, first.pages + 1)]
    assert first.pages > 1 and all(len(p.text) <= 1_000 for p in pages)
    assert "".join(p.text.replace("\n", "") for p in pages) == text.replace("\n", "")
    assert "page=2" in first.render() and "last page" in pages[-1].render()
    with pytest.raises(UsageError, match="there are"):
        page_of(text, first.pages + 1, 1_000)


def test_a_short_text_is_one_page_without_a_footer() -> None:
    assert page_of("r1 hello", 1, 1_000).render() == "r1 hello"


def test_only_loopback_is_served_without_a_token() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("example.org")
    check_binding("127.0.0.1", None)
    check_binding("0.0.0.0", "token")
    with pytest.raises(UsageError, match="not loopback"):
        check_binding("0.0.0.0", None)


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        (b"Bearer s3cret", True),
        (b"bearer s3cret", True),
        (b"BEARER s3cret", True),
        (b"Bearer wrong", False),
        (b"Basic s3cret", False),
        (b"s3cret", False),
        (b"", False),
    ],
)
def test_the_bearer_scheme_is_case_insensitive_and_the_token_exact(
    header: bytes, allowed: bool
) -> None:
    from flowstate.mcp.auth import BearerToken

    guard = BearerToken(app=None, token="s3cret")
    scope = {"type": "http", "headers": [(b"authorization", header)] if header else []}
    assert guard._authorised(scope) is allowed
