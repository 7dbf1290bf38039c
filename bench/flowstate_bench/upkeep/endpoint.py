"""A local OpenAI-compatible endpoint that serves scripted replies and counts every call.

Mem0 and Graphiti reach it through their own OpenAI clients (`base_url` pointed here), so what
is counted is exactly what each system would send to OpenAI: its prompts, the reply schema it
attaches, and its embedding inputs. Three routes, in the shapes the `openai` SDK parses:

- `POST /v1/chat/completions` (Mem0's extraction; Graphiti's JSON-mode calls and reranker),
- `POST /v1/responses` (Graphiti's structured calls: `responses.parse`, schema in `text.format`),
- `POST /v1/embeddings` (both systems' embedders; float or base64 vectors as asked).

Each call is kept as received (`Received`), with the label of the write in progress
(`Endpoint.label`), so a write's whole bill is the sum of its calls. Prompt tokens are counted
as a provider bills them (`flowstate.tokens.count_request`: messages, reply schema, tools);
completion tokens are the scripted reply's. The usage each reply reports is that count, so a
system's own token tracker sees the same figures.

    with Endpoint(respond) as ep:
        ep.label = "r1"
        ...  # the memory system writes
        ep.bill("r1")   # Bill(prompt_tokens=..., completion_tokens=..., calls=..., ...)
"""

from __future__ import annotations

import base64
import json
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from flowstate.tokens import count_request, count_tokens
from flowstate_bench.embedding import hash_vector

# The model name the systems are configured with: how the calls are billed (o200k_base).
BILLED_AS = "gpt-4o-mini"
EMBEDDING_DIMENSIONS = 256


@dataclass(frozen=True)
class Received:
    """One call as it reached the endpoint: the route, the request body, the scripted reply
    and the write it belongs to."""

    route: str  # "chat", "responses" or "embeddings"
    label: str
    body: dict[str, Any]
    reply: str
    prompt_tokens: int
    completion_tokens: int

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages sent (a Responses call's `instructions` as a system message)."""
        if self.route == "chat":
            return list(self.body.get("messages") or [])
        given = self.body.get("input")
        messages = [{"role": "user", "content": given}] if isinstance(given, str) else given or []
        if self.body.get("instructions"):
            messages = [{"role": "system", "content": self.body["instructions"]}, *messages]
        return list(messages)

    @property
    def reply_schema(self) -> dict[str, Any] | None:
        """The reply format as sent: `response_format`, or a Responses call's `text.format`."""
        if self.route == "responses":
            return (self.body.get("text") or {}).get("format")
        return self.body.get("response_format")

    @property
    def schema_name(self) -> str:
        """The name of the structured reply asked for ('' for plain JSON mode)."""
        schema = self.reply_schema or {}
        return str(schema.get("name") or (schema.get("json_schema") or {}).get("name") or "")

    @property
    def embedded(self) -> list[str]:
        given = self.body.get("input")
        return [given] if isinstance(given, str) else [str(t) for t in given or []]


@dataclass(frozen=True)
class Bill:
    """What one write cost at the boundary: its model calls and, apart, its embedding calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    embedding_tokens: int = 0
    embedding_calls: int = 0
    by_schema: dict[str, int] = field(default_factory=dict)  # tokens per kind of call

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def count_prompt(call_messages: list[dict[str, Any]], body: dict[str, Any], schema: Any) -> int:
    """Prompt tokens a provider bills: the messages, the reply schema, the tools."""
    tools = body.get("tools") or None
    return count_request(call_messages, schema or None, tools, BILLED_AS)


Responder = Callable[[Received], str]


class Endpoint:
    """The server, on 127.0.0.1 at a free port, for the life of a `with` block."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.label = ""
        self.received: list[Received] = []
        # Each request's bytes as they came off the socket, with its write's label: what a
        # check counts apart from `received`.
        self.wire: list[tuple[str, str, bytes]] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the endpoint is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> Endpoint:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def calls(self, label: str) -> list[Received]:
        return [r for r in self.received if r.label == label]

    def bill(self, label: str) -> Bill:
        model = [r for r in self.calls(label) if r.route != "embeddings"]
        emb = [r for r in self.calls(label) if r.route == "embeddings"]
        kinds: dict[str, int] = {}
        for r in model:
            kind = r.schema_name or "json"
            kinds[kind] = kinds.get(kind, 0) + r.prompt_tokens + r.completion_tokens
        return Bill(
            sum(r.prompt_tokens for r in model),
            sum(r.completion_tokens for r in model),
            len(model),
            sum(r.prompt_tokens for r in emb),
            len(emb),
            kinds,
        )

    def handle(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        """Answer one call and keep it."""
        if route == "embeddings":
            texts = Received(route, self.label, body, "", 0, 0).embedded
            tokens = sum(count_tokens(t, BILLED_AS) for t in texts)
            self._keep(Received(route, self.label, body, "", tokens, 0))
            return _embeddings(body, texts, tokens)
        probe = Received(route, self.label, body, "", 0, 0)
        reply = self.respond(probe)
        prompt = count_prompt(probe.messages, body, probe.reply_schema)
        completion = count_tokens(reply, BILLED_AS)
        self._keep(Received(route, self.label, body, reply, prompt, completion))
        if route == "responses":
            return _response(body, reply, prompt, completion)
        return _chat(body, reply, prompt, completion)

    def _keep(self, call: Received) -> None:
        with self._lock:
            self.received.append(call)


def _handler(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    routes = {
        "/v1/chat/completions": "chat",
        "/v1/responses": "responses",
        "/v1/embeddings": "embeddings",
    }

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            route = routes.get(self.path.split("?", 1)[0])
            size = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(size)
            with endpoint._lock:
                endpoint.wire.append((endpoint.label, self.path, raw))
            if route is None:
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            try:
                answer = endpoint.handle(route, json.loads(raw))
            except Exception as e:  # a scripted reply that cannot be made: the system sees a 500
                endpoint.errors.append(f"{route}: {type(e).__name__}: {e}")
                return self._send(500, {"error": {"message": f"{type(e).__name__}: {e}"}})
            self._send(200, answer)

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return  # quiet: the calls are kept, not logged

    return Handler


def _chat(body: dict[str, Any], reply: str, prompt: int, completion: int) -> dict[str, Any]:
    choice: dict[str, Any] = {
        "index": 0,
        "message": {"role": "assistant", "content": reply},
        "finish_reason": "stop",
    }
    return {
        "id": f"chatcmpl-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", BILLED_AS),
        "choices": [choice],
        "usage": _usage(prompt, completion),
    }


def _response(body: dict[str, Any], reply: str, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "id": f"resp_{time.monotonic_ns()}",
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model", BILLED_AS),
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": f"msg_{time.monotonic_ns()}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": reply, "annotations": []}],
            }
        ],
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "text": body.get("text") or {"format": {"type": "text"}},
        "usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def _embeddings(body: dict[str, Any], texts: list[str], tokens: int) -> dict[str, Any]:
    dims = int(body.get("dimensions") or EMBEDDING_DIMENSIONS)
    vectors = [hash_vector(t, dims) for t in texts]
    as_base64 = body.get("encoding_format") == "base64"
    data = [
        {
            "object": "embedding",
            "index": i,
            "embedding": _b64(v) if as_base64 else v,
        }
        for i, v in enumerate(vectors)
    ]
    return {
        "object": "list",
        "data": data,
        "model": body.get("model", "text-embedding-3-small"),
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


def _b64(vector: list[float]) -> str:
    """The SDK's default wire form: little-endian float32, base64."""
    return base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()


def _usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
