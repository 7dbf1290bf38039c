"""How the test Bolt proxy (tests/neo4j/bolt_proxy.py) reads the stream, without a socket:
both handshakes, messages split anywhere across reads, keep-alives, and a RUN's query text.
An outage test relies on this reading to cut the transaction it names and no other."""

from __future__ import annotations

import pytest

from tests.neo4j.bolt_proxy import COMMIT, RUN, Frames, run_query, signature

PREAMBLE = bytes.fromhex("6060b017000001ff000808050002040400000003")
# The manifest a 5.26 server answers with: 3 version ranges, no capabilities.
MANIFEST = bytes.fromhex("000001ff0300040404000404050002080500")
CHOSEN = bytes.fromhex("0000080500")  # 5.8, then the capabilities varint


def chunked(message: bytes, size: int = 3) -> bytes:
    """`message` in chunks of `size` bytes, then the end marker."""
    out = b""
    for at in range(0, len(message), size):
        part = message[at : at + size]
        out += len(part).to_bytes(2, "big") + part
    return out + b"\x00\x00"


def run_message(query: str) -> bytes:
    text = query.encode()
    head = bytes([0x80 | len(text)]) if len(text) < 16 else bytes([0xD0, len(text)])
    return bytes([0xB3, RUN]) + head + text + b"\xa0\xa0"


COMMIT_MESSAGE = bytes([0xB0, COMMIT])


def pieces(frames: Frames, stream: bytes, step: int) -> list[tuple[bytes, bytes | None]]:
    out = []
    for at in range(0, len(stream), step):
        out += frames.feed(stream[at : at + step])
    return out


@pytest.mark.parametrize("step", [1, 2, 7, 1000])
def test_both_directions_of_a_manifest_handshake_then_whole_messages(step: int) -> None:
    server = Frames()
    client = Frames(server)
    long_query = "MATCH (n) RETURN n LIMIT 1"
    sent = [run_message(long_query), COMMIT_MESSAGE]
    assert pieces(client, PREAMBLE, step) == [(PREAMBLE, None)]
    handshake = pieces(server, MANIFEST, step)  # the version, then the manifest
    assert b"".join(raw for raw, _ in handshake) == MANIFEST
    assert [m for _, m in handshake] == [None, None] and server.manifest
    stream = CHOSEN + b"".join(chunked(m) for m in sent)
    got = pieces(client, stream, step)
    assert got[0] == (CHOSEN, None)
    assert [m for _, m in got[1:]] == sent
    assert b"".join(raw for raw, _ in got) == stream  # forwarded byte for byte
    assert run_query(sent[0]) == long_query and signature(sent[1]) == COMMIT


def test_a_plain_version_reply_ends_the_handshake_and_a_noop_is_a_message_of_nothing() -> None:
    server = Frames()
    client = Frames(server)
    assert client.feed(PREAMBLE) == [(PREAMBLE, None)]
    assert server.feed(bytes.fromhex("00000405")) == [(bytes.fromhex("00000405"), None)]
    success = bytes([0xB1, 0x70, 0xA0])
    assert server.feed(b"\x00\x00" + chunked(success)) == [
        (b"\x00\x00", b""),
        (chunked(success), success),
    ]
    assert [m for _, m in client.feed(chunked(COMMIT_MESSAGE))] == [COMMIT_MESSAGE]


def test_only_a_run_has_a_query() -> None:
    assert run_query(run_message("RETURN 1")) == "RETURN 1"
    assert run_query(COMMIT_MESSAGE) is None and signature(b"") is None
