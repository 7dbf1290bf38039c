"""A Bolt proxy on loopback, between the driver and Neo4j, that fails the way a network does.

Tests of outages go through it instead of replacing store operations: the driver meets a
refused connection, a socket closed in the middle of a transaction, or a COMMIT whose reply
never comes, and its own errors (ServiceUnavailable, SessionExpired, IncompleteCommit) reach
FlowState's code.

    with BoltProxy.to("bolt://127.0.0.1:7687") as proxy:
        settings = Neo4jSettings(uri=proxy.uri)
        with proxy.lose_commit_reply(query(Q.COMMIT_BUNDLE)):
            ...  # the commit lands; the driver hears nothing back and says so

Faults are named by the Cypher a transaction runs (the catalog's text, which the store sends
verbatim), so a test cuts exactly the transaction it means and no other.

How the proxy reads the stream: after the handshake (a 20-byte preamble from the client; the
server's 4-byte version, or, in the manifest handshake of Bolt 5.7+, the manifest and then
the client's choice), both directions are chunked messages: 2-byte big-endian chunk sizes,
a 0x0000 chunk ending each message. A message is a PackStream structure: a marker byte, then
its signature. The proxy forwards whole messages, so it can hold one back: BEGIN is 0x11,
RUN 0x10 (its first field the query text), COMMIT 0x12, ROLLBACK 0x13, GOODBYE 0x02 (the one
request the server does not answer); the server answers each other request with one summary,
SUCCESS 0x70, IGNORED 0x7E or FAILURE 0x7F (RECORD 0x71 comes before a summary). Counting
requests and summaries per connection tells which reply answers the COMMIT: the proxy lets
the server apply it, waits for that reply, drops it and closes the connection. The commit
has then landed (the server said so), and the driver cannot know.

The proxy runs its own event loop in a daemon thread, listens on 127.0.0.1 only, and shuts
itself down after `lifetime_s` even if a test forgets to.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

T = TypeVar("T")

BEGIN, RUN, COMMIT, ROLLBACK, GOODBYE = 0x11, 0x10, 0x12, 0x13, 0x02
SUMMARIES = {0x70, 0x7E, 0x7F}  # SUCCESS, IGNORED, FAILURE
MANIFEST_V1 = b"\x00\x00\x01\xff"
PREAMBLE = 20  # the magic 0x6060B017 and four version proposals


class Frames:
    """One direction of a Bolt connection, cut into what the proxy forwards: the handshake's
    bytes as they come, then whole messages. `feed` returns (raw bytes, message or None)."""

    def __init__(self, server: Frames | None = None) -> None:
        self.server = server  # None: these are the server's frames; else the client's
        self.buffer = bytearray()
        self.handshake = True
        self.stage = 0
        self.manifest = False  # the server answered with the manifest handshake

    def feed(self, data: bytes) -> list[tuple[bytes, bytes | None]]:
        self.buffer += data
        out: list[tuple[bytes, bytes | None]] = []
        while self.buffer:
            if self.handshake:
                size = self._handshake_part()
                if size is None:
                    break
                if size:
                    out.append((bytes(self.buffer[:size]), None))
                    del self.buffer[:size]
                continue
            piece = self._message()
            if piece is None:
                break
            out.append(piece)
        return out

    def _handshake_part(self) -> int | None:
        """The size of the next handshake part buffered whole (0: the handshake is over), or
        None while it is incomplete."""
        buf = self.buffer
        if self.server is not None:  # the client's side
            if self.stage == 0:
                if len(buf) < PREAMBLE:
                    return None
                self.stage = 1
                return PREAMBLE
            # The client speaks again only after the server's reply, which the proxy read.
            if not self.server.manifest:
                self.handshake = False
                return 0
            end = _varint_end(buf, 4)  # the chosen version, then a capabilities varint
            if end is not None:
                self.handshake = False
            return end
        if self.stage == 0:
            if len(buf) < 4:
                return None
            self.stage, self.manifest = 1, bytes(buf[:4]) == MANIFEST_V1
            self.handshake = self.manifest
            return 4
        # the manifest: a varint count, that many 4-byte versions, a capabilities varint
        count_end = _varint_end(buf, 0)
        if count_end is None:
            return None
        end = _varint_end(buf, count_end + 4 * _varint(buf[:count_end]))
        if end is not None:
            self.handshake = False
        return end

    def _message(self) -> tuple[bytes, bytes] | None:
        buf, at, body = self.buffer, 0, bytearray()
        while True:
            if len(buf) < at + 2:
                return None
            size = int.from_bytes(buf[at : at + 2], "big")
            at += 2
            if size == 0:
                break
            if len(buf) < at + size:
                return None
            body += buf[at : at + size]
            at += size
        raw = bytes(buf[:at])
        del buf[:at]
        return raw, bytes(body)  # an empty body is a NOOP (keep-alive)


def _varint_end(buf: bytearray, start: int) -> int | None:
    for i in range(start, len(buf)):
        if not buf[i] & 0x80:
            return i + 1
    return None


def _varint(data: bytes | bytearray) -> int:
    value = 0
    for shift, byte in enumerate(data):
        value |= (byte & 0x7F) << (7 * shift)
    return value


def signature(message: bytes) -> int | None:
    return message[1] if len(message) >= 2 and 0xB0 <= message[0] <= 0xBF else None


def run_query(message: bytes) -> str | None:
    """The query text of a RUN message (its first field, a PackStream string)."""
    if signature(message) != RUN or len(message) < 3:
        return None
    marker, at = message[2], 3
    if 0x80 <= marker <= 0x8F:
        size = marker & 0x0F
    elif marker in (0xD0, 0xD1, 0xD2):
        width = {0xD0: 1, 0xD1: 2, 0xD2: 4}[marker]
        size, at = int.from_bytes(message[at : at + width], "big"), at + width
    else:
        return None
    return message[at : at + size].decode("utf-8", "replace")


@dataclass
class Fault:
    """One armed fault: it fires at the `nth` RUN of any of `queries` (counted from arming)."""

    kind: str  # "cut" or "lose_reply"
    queries: frozenset[str]
    nth: int
    down: bool  # stay down (refusing connections) after firing, until restored
    seen: int = 0
    fired: threading.Event = field(default_factory=threading.Event)


@dataclass(eq=False)
class Link:
    """One proxied connection."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    requests: int = 0  # client messages the server answers
    replies: int = 0  # summaries the server sent
    doomed: Fault | None = None  # the transaction open on it runs the fault's query
    drop_reply: int | None = None  # the number of the reply (to a COMMIT) to drop
    drop_fault: Fault | None = None

    def abort(self) -> None:
        for writer in (self.client, self.server):
            writer.transport.abort()


class BoltProxy:
    """A loopback proxy to one Neo4j; see the module's docstring."""

    def __init__(self, host: str, port: int, *, lifetime_s: float = 600.0) -> None:
        self.target = (host, port)
        self.lifetime_s = lifetime_s
        self.port = 0
        self.runs: list[str] = []  # every RUN's query text, as the client sent it
        self._links: set[Link] = set()
        self._faults: list[Fault] = []
        self._mode = "up"  # "up", "down" (refusing), "black_hole"
        self._server: asyncio.Server | None = None
        self._loop = asyncio.new_event_loop()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._main, name="bolt-proxy", daemon=True)
        self._ready = threading.Event()

    @classmethod
    def to(cls, uri: str, **options: Any) -> BoltProxy:
        """A proxy to the server of a `bolt://` or `neo4j://` URI (plain text: the proxy reads
        the stream; routing is not followed, so the driver is given `bolt://` to the proxy)."""
        parts = urlsplit(uri)
        if parts.scheme not in ("bolt", "neo4j"):
            raise ValueError(f"the Bolt proxy reads plain Bolt only, not {parts.scheme}://")
        return cls(parts.hostname or "127.0.0.1", parts.port or 7687, **options)

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    # --- life --------------------------------------------------------------------------------

    def __enter__(self) -> BoltProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the Bolt proxy did not start listening")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._stop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _main(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        await self._listen()
        self._ready.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), self.lifetime_s)
        await self._close_listener()
        for link in list(self._links):
            link.abort()
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _close_listener(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None

    def _call(self, work: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return asyncio.run_coroutine_threadsafe(work(), self._loop).result(10)

    # --- what a test does ---------------------------------------------------------------------

    def go_down(self) -> None:
        """The server goes away: open connections are cut, new ones refused."""
        self._call(self._go_down)

    def black_hole(self) -> None:
        """The network drops everything: connections are accepted (or kept) and nothing passes
        either way, so the driver waits for its own timeouts."""
        self._call(self._black_hole)

    def restore(self) -> None:
        """Back up: listening and forwarding again (cut connections stay cut)."""
        self._call(self._restore)

    @contextlib.contextmanager
    def cut(self, queries: str | Iterable[str], nth: int = 1) -> Iterator[Fault]:
        """Within the block, the `nth` transaction statement running one of `queries` never
        reaches the server: its connection is cut mid-transaction and the server stays down
        (refusing connections, so the driver's retries fail too) until the block ends. The
        block fails unless the fault fired."""
        with self._armed(Fault("cut", _texts(queries), nth, down=True)) as fault:
            yield fault

    @contextlib.contextmanager
    def lose_commit_reply(self, queries: str | Iterable[str], nth: int = 1) -> Iterator[Fault]:
        """Within the block, the transaction whose `nth` statement runs one of `queries`
        commits on the server, and the server's reply to COMMIT is dropped with the
        connection: the commit landed and the driver cannot know. The block fails unless
        the fault fired."""
        with self._armed(Fault("lose_reply", _texts(queries), nth, down=False)) as fault:
            yield fault

    @contextlib.contextmanager
    def _armed(self, fault: Fault) -> Iterator[Fault]:
        self._call(lambda: self._arm(fault))
        try:
            yield fault
        finally:
            self._call(lambda: self._disarm(fault))
            # Checked even when the block raised: an error that came from elsewhere must not
            # pass for the outage's.
            if not fault.fired.is_set():
                raise AssertionError(
                    f"the {fault.kind} fault at {_short(fault.queries)} never fired"
                )

    def ran(self, text: str) -> int:
        """How many times the client sent a RUN of `text` (cut ones included)."""
        return self._call(lambda: self._ran(text))

    # --- inside the proxy's loop --------------------------------------------------------------

    async def _ran(self, text: str) -> int:
        return self.runs.count(text)

    async def _arm(self, fault: Fault) -> None:
        self._faults.append(fault)

    async def _disarm(self, fault: Fault) -> None:
        if fault in self._faults:
            self._faults.remove(fault)
        await self._restore()

    async def _go_down(self) -> None:
        self._mode = "down"
        await self._close_listener()
        for link in list(self._links):
            link.abort()

    async def _black_hole(self) -> None:
        self._mode = "black_hole"
        if self._server is None:
            await self._listen()

    async def _restore(self) -> None:
        self._mode = "up"
        if self._server is None:
            await self._listen()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._mode == "down":  # between the cut and the listener closing
            writer.transport.abort()
            return
        if self._mode == "black_hole":  # accepted, never answered
            with contextlib.suppress(ConnectionError):
                while await reader.read(65536):
                    pass
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        link = Link(writer, up_writer)
        server_frames = Frames()
        client_frames = Frames(server_frames)
        self._links.add(link)
        try:
            await asyncio.gather(
                self._pump(reader, up_writer, client_frames, link, self._from_client),
                self._pump(up_reader, writer, server_frames, link, self._from_server),
            )
        finally:
            self._links.discard(link)
            link.abort()

    async def _pump(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        frames: Frames,
        link: Link,
        judge: Callable[[Link, bytes], bool],
    ) -> None:
        """Forward whole messages; stop (and cut the link) when `judge` says so."""
        try:
            while data := await reader.read(65536):
                if self._mode == "black_hole":
                    continue
                for raw, message in frames.feed(data):
                    if message is not None and not judge(link, message):
                        link.abort()
                        return
                    writer.write(raw)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            link.abort()

    def _from_client(self, link: Link, message: bytes) -> bool:
        sig = signature(message)
        if sig is None:
            return True  # a NOOP
        if sig != GOODBYE:
            link.requests += 1
        if sig == BEGIN:
            link.doomed = None
        text = run_query(message)
        if text is not None:
            self.runs.append(text)
            fault = self._match(text)
            if fault is not None and fault.kind == "cut":
                fault.fired.set()
                if fault.down:
                    self._mode = "down"  # refused from now on; the listener closes next
                    asyncio.get_running_loop().create_task(self._go_down())
                return False
            if fault is not None:
                link.doomed = fault
        if sig == COMMIT and link.doomed is not None:
            link.drop_reply, link.drop_fault, link.doomed = link.requests, link.doomed, None
        if sig == ROLLBACK:
            link.doomed = None
        return True

    def _from_server(self, link: Link, message: bytes) -> bool:
        if signature(message) not in SUMMARIES:
            return True
        link.replies += 1
        if link.drop_reply is not None and link.replies == link.drop_reply:
            assert link.drop_fault is not None
            link.drop_fault.fired.set()  # the server has answered the COMMIT: it landed
            return False
        return True

    def _match(self, text: str) -> Fault | None:
        for fault in self._faults:
            if text in fault.queries and not fault.fired.is_set():
                fault.seen += 1
                if fault.seen == fault.nth:
                    self._faults.remove(fault)
                    return fault
        return None


def _texts(queries: str | Iterable[str]) -> frozenset[str]:
    return frozenset([queries] if isinstance(queries, str) else queries)


def _short(queries: frozenset[str]) -> str:
    return " | ".join(sorted(q.strip().splitlines()[0][:60] for q in queries))
