"""Token counting with cached tiktoken encoders.

Counts are tiktoken estimates: exact for OpenAI models, close enough for budgeting elsewhere.

>>> count_tokens("hello world")
2
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import tiktoken
import tiktoken.model

from flowstate.errors import FlowStateRuntimeError

MODERN = "o200k_base"
FALLBACK = "cl100k_base"
_SUPPORTED = {MODERN, FALLBACK}

# OpenAI's accounting for chat messages: every message is wrapped in a few special tokens,
# a `name` costs one more, and the reply is primed with three.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3


def _bundled_cache_dir() -> str | None:
    # The BPE files of o200k_base and cl100k_base ship in the wheel (flowstate/_tiktoken, named
    # as tiktoken's cache names them), so counting works offline and without litellm; litellm
    # ships the same files, used when ours are missing (an unusual install).
    ours = Path(__file__).resolve().parent / "_tiktoken"
    if (ours / _O200K_CACHE_NAME).is_file():
        return str(ours)
    # find_spec locates litellm without importing it (slow).
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return str(path) if path.is_dir() else None


# tiktoken caches a file under the SHA-1 of its address.
_O200K_CACHE_NAME = "fb374d419588a4632f3f557e76b4b70aebbca790"


def encoding_name(model: str | None = None) -> str:
    """The tiktoken encoding used for `model`, a litellm model name or None.

    >>> encoding_name("openai/gpt-4o-mini"), encoding_name("gpt-4"), encoding_name("claude-x")
    ('o200k_base', 'cl100k_base', 'o200k_base')
    """
    if not model:
        return MODERN
    return _encoding_name(model)


@lru_cache(maxsize=256)
def _encoding_name(model: str) -> str:
    # litellm names carry provider prefixes (`azure/`, `openrouter/openai/`); tiktoken wants none.
    bare = model.rsplit("/", 1)[-1]
    try:
        name = tiktoken.model.encoding_name_for_model(bare)
    except KeyError:
        return MODERN  # not an OpenAI model: assume a modern vocabulary
    if name in _SUPPORTED:
        return name
    return MODERN if name.startswith("o200k") else FALLBACK


@lru_cache(maxsize=8)
def _encoding(name: str) -> tiktoken.Encoding:
    cache_dir = _bundled_cache_dir()
    if cache_dir is not None:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", cache_dir)

    try:
        return tiktoken.get_encoding(name)
    except Exception as e:
        if name != FALLBACK:
            return _encoding(FALLBACK)
        raise FlowStateRuntimeError(
            f"cannot load tiktoken encoding {name!r} (no cached BPE file and no network?): {e}"
        ) from e


def encoder(model: str | None = None) -> tiktoken.Encoding:
    """The cached tiktoken encoder for `model`."""
    return _encoding(encoding_name(model))


def count_tokens(text: str, model: str | None = None) -> int:
    """Tokens in `text`; special-token strings such as `<|endoftext|>` count as plain text."""
    if not text:
        return 0
    return len(encoder(model).encode_ordinary(text))


def count_messages(messages: Iterable[Mapping[str, Any]], model: str | None = None) -> int:
    """Prompt tokens of a chat message list, with the usual per-message overhead.

    >>> count_messages([{"role": "user", "content": "hello world"}])
    9
    """
    total = REPLY_PRIMING
    for message in messages:
        total += TOKENS_PER_MESSAGE
        for key, value in message.items():
            if key == "tool_calls":
                total += sum(count_tokens(a, model) for a in _call_arguments(value))
                continue
            text = _text_of(value) if key == "content" else _field_text(value)
            total += count_tokens(text, model)
            if key == "name":
                total += TOKENS_PER_NAME
    return total


def count_request(
    messages: Iterable[Mapping[str, Any]],
    response_format: Mapping[str, Any] | None = None,
    tools: Iterable[Mapping[str, Any]] | None = None,
    model: str | None = None,
) -> int:
    """Prompt tokens a provider bills for one call: the messages, the reply schema sent as
    `response_format`, and the tool definitions, each as sent (the last two as compact JSON,
    which is how they reach the model).

    >>> count_request([{"role": "user", "content": "hi"}], {"type": "json_object"})
    14
    """
    total = count_messages(messages, model)
    if response_format:
        total += count_tokens(compact_json(response_format), model)
    for tool in tools or ():
        total += count_tokens(compact_json(tool), model)
    return total


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _call_arguments(calls: Any) -> list[str]:
    """The argument strings of an assistant's tool calls: what OpenAI's accounting (as
    litellm's `token_counter` implements it) bills of them; their names are billed with the
    tool definitions."""
    out = []
    for call in calls or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        arguments = function.get("arguments") if isinstance(function, Mapping) else None
        out.append(arguments if isinstance(arguments, str) else compact_json(arguments))
    return out


def _field_text(value: Any) -> str:
    """A message field other than its content (role, name, tool_call_id) as sent: strings as
    they are, anything else as compact JSON."""
    if value is None:
        return ""
    return value if isinstance(value, str) else compact_json(value)


def _text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, Mapping) for p in value):
        # content parts: count the text; other parts (images, audio) are not tokenised here
        return "".join(str(p.get("text", "")) for p in value if p.get("type", "text") == "text")
    return json.dumps(value, ensure_ascii=False, default=str)
