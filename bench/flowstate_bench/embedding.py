"""Embeddings through litellm, and a deterministic local embedding for offline runs.

Every baseline that embeds (`embedding`, `reasoningbank`, `mem0-style`) calls
`litellm.embedding(model=..., input=[...])`, so `--embedding-model text-embedding-3-small`
reaches OpenAI and `flowstate-embed/hash-256` (the default) reaches the local provider below,
registered in litellm's custom-provider map like the scripted chat models.

The local embedding is a hashed bag of words and character trigrams (unsigned feature hashing,
sublinear term frequency, L2-normalised): texts that share words are close, unrelated texts
score low (never below 0). No model, no network, the same vector on every machine.

>>> emb = Embedder(LOCAL_MODEL)
>>> a, b, c = emb.embed(["hdmi 2.1 cable", "an HDMI 2.1 cable, 2 m", "tilt-head stand mixer"])
>>> cosine(a, b) > 0.5 > cosine(a, c)
True
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from flowstate.errors import ModelError, UsageError
from flowstate.models.records import Usage
from flowstate.tokens import count_tokens
from flowstate_bench.strategy_names import LOCAL_EMBEDDING

PROVIDER = "flowstate-embed"
LOCAL_MODEL = LOCAL_EMBEDDING  # named where the command lines can read it cheaply
DEFAULT_DIMENSIONS = 256
_WORD = re.compile(r"[a-z0-9]+")
_install_lock = threading.Lock()
# Calls the local provider answered, per model name: what tests count to prove a path
# went through litellm.
CALLS: Counter[str] = Counter()

Vector = list[float]


def dimensions_of(model: str) -> int:
    """`hash-512` -> 512; a local name that is not `hash-<n>` is refused (a typo would
    otherwise run silently at the default size)."""
    match = re.fullmatch(r"(?:.*/)?hash-(\d+)", model)
    if match is None or int(match.group(1)) < 1:
        raise UsageError(f"unknown local embedding model {model!r}: use {PROVIDER}/hash-<n>")
    return int(match.group(1))


def hash_vector(text: str, dims: int = DEFAULT_DIMENSIONS) -> Vector:
    """Unsigned feature hashing of words and character trigrams, L2-normalised. Unsigned so
    every cosine is >= 0, as with a real embedding model: signed hashing gave unrelated texts
    negative cosines, which MemoryArena's `score > 0` filter then dropped."""
    words = _WORD.findall(text.lower())
    features: Counter[str] = Counter(f"w:{w}" for w in words)
    for w in words:
        padded = f"#{w}#"
        features.update(f"c:{padded[i : i + 3]}" for i in range(len(padded) - 2))
    vec = [0.0] * dims
    for feature, count in features.items():
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % dims
        weight = 1.0 + math.log(count)
        vec[slot] += weight if feature.startswith("w:") else 0.5 * weight
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec] if norm else vec


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def install() -> None:
    """Route `flowstate-embed/...` to the local provider. Safe to call repeatedly."""
    from flowstate.llm import load_litellm

    litellm = load_litellm()

    with _install_lock:
        if any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
            return
        litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": _provider()})


def _provider() -> Any:
    from flowstate.llm import load_litellm

    litellm = load_litellm()

    # A base class of a module loaded at run time, which mypy cannot name.
    class LocalEmbedding(litellm.CustomLLM):  # type: ignore[name-defined]
        """Answers `litellm.embedding` with `hash_vector`, usage counted with tiktoken."""

        def embedding(self, model: str, input: list[Any], model_response: Any, *a: Any, **k: Any):  # noqa: A002, ANN201
            dims = dimensions_of(model)
            texts = [str(t) for t in input]
            model_response.data = [
                {"object": "embedding", "index": i, "embedding": hash_vector(t, dims)}
                for i, t in enumerate(texts)
            ]
            model_response.model = f"{PROVIDER}/{model}"
            tokens = sum(count_tokens(t) for t in texts)
            model_response.usage = litellm.Usage(prompt_tokens=tokens, total_tokens=tokens)
            CALLS[model] += 1
            return model_response

        async def aembedding(self, *a: Any, **k: Any):  # noqa: ANN201
            return self.embedding(*a, **k)

    return LocalEmbedding()


class Embedder:
    """`litellm.embedding` behind one method, with its own usage (tokens and calls), so a
    memory's embedding spend is reported apart from the task agent's."""

    def __init__(self, model: str = LOCAL_MODEL, **litellm_kwargs: Any) -> None:
        if model.startswith(f"{PROVIDER}/"):
            dimensions_of(model)  # refuse a misnamed local model before any run starts
        self.model, self.kwargs = model, litellm_kwargs
        self.usage = Usage()

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One call for all `texts` (empty strings are sent as a single space)."""
        if not texts:
            return []
        from flowstate.llm import load_litellm

        litellm = load_litellm()

        if self.model.startswith(f"{PROVIDER}/"):
            install()
        sent = [t if t.strip() else " " for t in texts]
        try:
            response = litellm.embedding(model=self.model, input=sent, **self.kwargs)
        except Exception as e:  # litellm's errors (unknown model, no key): one line, not a trace
            detail = str(e).strip().splitlines()[0] if str(e).strip() else ""
            raise ModelError(
                f"embedding model {self.model!r} refused the call: {type(e).__name__}: "
                f"{detail[:300]}"
            ) from e
        data = sorted(response.data, key=lambda d: d["index"])
        given = getattr(response, "usage", None)
        tokens = getattr(given, "prompt_tokens", 0) or sum(count_tokens(t) for t in sent)
        self.usage += Usage(prompt_tokens=tokens, completion_tokens=0, calls=1)
        return [list(d["embedding"]) for d in data]

    def one(self, text: str) -> Vector:
        return self.embed([text])[0]
