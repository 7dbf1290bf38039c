"""What reached litellm, seen at its provider boundary, and counted without FlowState's counter.

`recording()` puts a recorder in front of the provider litellm routes `flowstate-scripted/...`
to: it keeps what litellm handed the provider (the messages, and the optional parameters:
`response_format`, `tools`) and passes the call on. `StubProvider` is a provider of the
tests' own, registered with litellm like any other, for replies a script cannot give (no
usage, a usage of the provider's, a reply cut at the token limit).

`prompt_tokens` counts a received call apart from `flowstate.tokens`, with a tiktoken encoding
built here from the BPE file litellm ships (not the copy FlowState loads): the messages by
litellm's own `token_counter` (its implementation of OpenAI's chat accounting), the reply
schema and tool definitions as the compact JSON they are sent as.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import tiktoken
import tiktoken_ext.openai_public as openai_public  # type: ignore[import-untyped]

from flowstate.llm._litellm import litellm
from flowstate.llm.scripted import PROVIDER, install_provider

STUB = "flowstate-test-stub"


@dataclass(frozen=True)
class Received:
    """One call as litellm handed it to the provider."""

    model: str
    messages: list[dict[str, Any]]
    optional_params: dict[str, Any]

    @property
    def response_format(self) -> Any:
        return self.optional_params.get("response_format")

    @property
    def tools(self) -> list[Any]:
        return list(self.optional_params.get("tools") or [])


def _received(model: str, messages: Any, kwargs: dict[str, Any]) -> Received:
    optional = copy.deepcopy(dict(kwargs.get("optional_params") or {}))
    return Received(model, copy.deepcopy(list(messages)), optional)


class Recorder(litellm.CustomLLM):
    """Keeps each call litellm routes to `inner`, then lets `inner` answer it; `replies`: the
    text of each answer, as the provider returned it."""

    def __init__(self, inner: Any) -> None:
        super().__init__()
        self.inner = inner
        self.received: list[Received] = []
        self.replies: list[str] = []

    def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        self.received.append(_received(model, messages, kwargs))
        return self._kept(self.inner.completion(model, messages, *args, **kwargs))

    async def acompletion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        self.received.append(_received(model, messages, kwargs))
        return self._kept(await self.inner.acompletion(model, messages, *args, **kwargs))

    def _kept(self, response: Any) -> Any:
        self.replies.append(str(response.choices[0].message.content or ""))
        return response


@contextmanager
def recording(provider: str = PROVIDER) -> Iterator[Recorder]:
    """Within the block, every call litellm routes to `provider` is recorded."""
    install_provider()
    entries = litellm.custom_provider_map
    at, entry = next((i, e) for i, e in enumerate(entries) if e["provider"] == provider)
    recorder = Recorder(entry["custom_handler"])
    entries[at] = {"provider": provider, "custom_handler": recorder}
    try:
        yield recorder
    finally:
        entries[entries.index({"provider": provider, "custom_handler": recorder})] = entry


class StubProvider(litellm.CustomLLM):
    """Answers every call with `text`; `usage` (prompt, completion) is the provider's own
    figure, None for a provider that reports none; `finish_reason` as given."""

    def __init__(
        self, text: str, finish_reason: str = "stop", usage: tuple[int, int] | None = None
    ) -> None:
        super().__init__()
        self.text, self.finish_reason, self.usage = text, finish_reason, usage
        self.received: list[Received] = []

    def completion(self, model: str, messages: list[Any], *args: Any, **kwargs: Any) -> Any:
        self.received.append(_received(model, messages, kwargs))
        response = kwargs["model_response"]
        response.choices[0].message.content = self.text
        response.choices[0].finish_reason = self.finish_reason
        prompt, completion = self.usage or (0, 0)
        response.usage = litellm.Usage(
            prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
        )
        return response


@contextmanager
def stub_provider(stub: StubProvider) -> Iterator[StubProvider]:
    """`stub` answers litellm's `flowstate-test-stub/<model>` within the block."""
    entry: Any = {"provider": STUB, "custom_handler": stub}
    litellm.custom_provider_map.append(entry)
    try:
        yield stub
    finally:
        litellm.custom_provider_map.remove(entry)


# --- counting apart from flowstate.tokens ----------------------------------------------------


def prompt_tokens(call: Received, model: str) -> int:
    """The prompt a provider bills for `call`, for the OpenAI model `model` (a bare name such
    as "gpt-4o", whose encoding tiktoken's own table gives)."""
    encoding = litellm_encoding(tiktoken.encoding_name_for_model(model))
    # litellm's accounting of the messages, with the encoding handed over as a custom
    # tokenizer: its built-in path encodes in 1024-character chunks, which drifts by up to a
    # token per chunk boundary (on purpose, for speed), and a bill is checked to the token.
    exact = {"type": "huggingface_tokenizer", "tokenizer": _Exact(encoding)}
    total = int(litellm.token_counter(model=model, custom_tokenizer=exact, messages=call.messages))
    for sent in [call.response_format, *call.tools]:
        if sent:
            compact = json.dumps(sent, ensure_ascii=False, separators=(",", ":"))
            total += len(encoding.encode_ordinary(compact))
    return total


@dataclass(frozen=True)
class _Exact:
    """A tiktoken encoding in the shape litellm's custom tokenizers have."""

    encoding: tiktoken.Encoding

    def encode_batch_fast(self, texts: list[str]) -> list[list[int]]:
        return [self.encoding.encode_ordinary(text) for text in texts]


def text_tokens(text: str, model: str) -> int:
    return len(litellm_encoding(tiktoken.encoding_name_for_model(model)).encode_ordinary(text))


LITELLM_TOKENIZERS = Path(litellm.__file__).resolve().parent / "litellm_core_utils" / "tokenizers"


@cache
def litellm_encoding(name: str) -> tiktoken.Encoding:
    """The encoding `name` built from litellm's copy of its BPE file, bypassing tiktoken's
    registry (which would hand back the encoding FlowState already loaded)."""
    constructor = {"o200k_base": openai_public.o200k_base, "cl100k_base": openai_public.cl100k_base}
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(LITELLM_TOKENIZERS)  # tiktoken's cache: no network
    try:
        spec = constructor[name]()
    finally:
        if before is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before
    return tiktoken.Encoding(**{**spec, "name": f"{name} (litellm's copy)"})
