"""The model behind a small protocol, and its litellm implementation.

>>> client = LiteLLMClient("gpt-4o-mini", temperature=0)          # doctest: +SKIP
>>> done = client.complete([{"role": "user", "content": "..."}], StepOutput)  # doctest: +SKIP
>>> done.value, done.error, done.usage                             # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from flowstate.errors import ModelError, UsageError
from flowstate.llm.parsing import ParseResult, parse_step
from flowstate.models.records import Usage
from flowstate.tokens import compact_json, count_request, count_tokens

T = TypeVar("T", bound=BaseModel)

Message = dict[str, Any]

DEFAULT_RETRIES = 2
DEFAULT_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
_RETRY_STATUS = {408, 409, 429}


@dataclass(frozen=True)
class Sent:
    """What one call handed to litellm: everything a provider bills as the prompt."""

    messages: list[Message]
    response_format: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None

    def tokens(self, model: str | None = None) -> int:
        return count_request(self.messages, self.response_format, self.tools, model)


@dataclass(frozen=True)
class TextFormat(Generic[T]):
    """A reply format the prompt itself describes: no schema is sent beside the messages, and
    the reply's text is read by `parse` (e.g. `flowstate.llm.step_lines.STEP_LINES`)."""

    schema: type[T]
    parse: Callable[[str], ParseResult[T]]


@dataclass(frozen=True)
class Completion(Generic[T]):
    """One model reply: the raw text, the parsed object (or why not), what it cost, and what
    was sent for it."""

    text: str
    value: T | None
    usage: Usage
    error: str | None = None
    finish_reason: str | None = None
    sent: Sent | None = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.value is not None


@runtime_checkable
class ModelClient(Protocol):
    """What the engine needs from a model. Failures raise `ModelError`; a reply that does not
    parse is not a failure: it comes back with `value=None` and `error` for the model to read."""

    model: str

    def complete(
        self, messages: list[Message], schema: type[T] | TextFormat[T]
    ) -> Completion[T]: ...

    async def acomplete(
        self, messages: list[Message], schema: type[T] | TextFormat[T]
    ) -> Completion[T]: ...


class LiteLLMClient:
    """A `ModelClient` over `litellm.completion`; any litellm model string works.

    `structured=None` asks litellm whether the model takes a JSON schema as `response_format`;
    when it does not, the schema is put into the system message instead. A `TextFormat` sends
    no schema at all: the prompt describes the reply. Transient provider
    errors (rate limits, timeouts, 5xx) are retried `retries` times with exponential backoff.
    Other keyword arguments go to litellm unchanged (`temperature`, `api_base`, ...).
    """

    def __init__(
        self,
        model: str,
        *,
        structured: bool | None = None,
        retries: int = DEFAULT_RETRIES,
        retry_backoff_s: float = DEFAULT_BACKOFF_S,
        **litellm_kwargs: Any,
    ) -> None:
        if not model:
            raise ValueError("model must be a litellm model string, e.g. 'gpt-4o-mini'")
        self.model = model
        self.retries = max(0, retries)
        self.retry_backoff_s = max(0.0, retry_backoff_s)
        self.litellm_kwargs = litellm_kwargs
        self._structured = structured

    def __repr__(self) -> str:
        return f"LiteLLMClient({self.model!r})"

    @property
    def structured(self) -> bool:
        """Whether the schema is sent as `response_format` (decided once, on first use)."""
        if self._structured is None:
            self._structured = supports_response_schema(self.model)
        return self._structured

    def complete(self, messages: list[Message], schema: type[T] | TextFormat[T]) -> Completion[T]:
        from flowstate.llm._litellm import litellm

        sent, kwargs = self._request(messages, schema)
        for attempt in range(self.retries + 1):
            try:
                response = litellm.completion(model=self.model, messages=sent.messages, **kwargs)
                break
            except Exception as e:
                if not self._retry(e, attempt):
                    raise self._failure(e, attempt + 1) from e
                time.sleep(self._delay(attempt))
        return self._completion(response, sent, schema)

    async def acomplete(
        self, messages: list[Message], schema: type[T] | TextFormat[T]
    ) -> Completion[T]:
        from flowstate.llm._litellm import litellm

        sent, kwargs = self._request(messages, schema)
        for attempt in range(self.retries + 1):
            try:
                response = await litellm.acompletion(
                    model=self.model, messages=sent.messages, **kwargs
                )
                break
            except Exception as e:
                if not self._retry(e, attempt):
                    raise self._failure(e, attempt + 1) from e
                await asyncio.sleep(self._delay(attempt))
        return self._completion(response, sent, schema)

    # --- steps shared by the sync and async paths -----------------------------------------

    def _request(
        self, messages: list[Message], schema: type[BaseModel] | TextFormat[Any]
    ) -> tuple[Sent, dict[str, Any]]:
        if isinstance(schema, TextFormat):
            sent = Sent(list(messages))
        elif self.structured:
            sent = Sent(list(messages), response_format(schema))
        else:
            sent = Sent(with_json_instruction(messages, schema))
        kwargs: dict[str, Any] = {}
        if sent.response_format is not None:
            kwargs["response_format"] = sent.response_format
        kwargs.update(self.litellm_kwargs)
        tools = kwargs.get("tools")
        if isinstance(tools, list):  # tool definitions given as litellm arguments are billed too
            sent = Sent(sent.messages, sent.response_format, tools)
        return sent, kwargs

    def _retry(self, error: Exception, attempt: int) -> bool:
        return attempt < self.retries and is_transient(error)

    def _delay(self, attempt: int) -> float:
        return float(min(MAX_BACKOFF_S, self.retry_backoff_s * 2**attempt))

    def _failure(self, error: Exception, attempts: int) -> ModelError:
        detail = f"{type(error).__name__}: {_detail(error)}"
        if is_transient(error):
            tries = "attempt" if attempts == 1 else "attempts"
            return ModelError(f"model {self.model!r} failed after {attempts} {tries}: {detail}")
        return ModelError(f"model {self.model!r} refused the call: {detail}")

    def _completion(
        self, response: Any, sent: Sent, schema: type[T] | TextFormat[T]
    ) -> Completion[T]:
        choice = response.choices[0]
        text = choice.message.content or ""
        finish = getattr(choice, "finish_reason", None)
        usage = self._usage(response, sent, text)
        parsed = schema.parse(text) if isinstance(schema, TextFormat) else parse_step(text, schema)
        error = parsed.error
        if error is not None and finish == "length":
            error = f"{error} (the reply was cut off at the output token limit; be shorter)"
        return Completion(text, parsed.value, usage, error, finish, sent)

    def _usage(self, response: Any, sent: Sent, text: str) -> Usage:
        """The provider's figures when it gives them, else the estimate; the estimate of the
        whole bill (messages, reply schema, tools) is kept beside them either way."""
        given = getattr(response, "usage", None)
        estimate = sent.tokens(self.model)
        prompt = getattr(given, "prompt_tokens", 0) or 0
        completion = getattr(given, "completion_tokens", 0) or 0
        if prompt <= 0:  # the provider did not say
            prompt = estimate
            completion = completion or count_tokens(text, self.model)
        return Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            calls=1,
            estimated_prompt_tokens=estimate,
        )


def supports_response_schema(model: str) -> bool:
    """litellm's view of whether `model` accepts a JSON schema; False when it does not know."""
    from flowstate.llm._litellm import litellm

    try:
        return bool(litellm.supports_response_schema(model=model))
    except Exception:
        return False


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    # strict=False: OpenAI's strict mode forbids defaults and open dicts, which StepOutput has.
    return {
        "type": "json_schema",
        "json_schema": {
            "name": schema.__name__,
            "schema": compact_schema(schema),
            "strict": False,
        },
    }


def compact_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema without what costs tokens at every call and tells a model nothing it
    lacks: pydantic's `title`s (they repeat the names), `discriminator`s (the `const` of each
    branch already says which one applies), `description`s and `default`s (the prompt says
    what the fields mean; an optional field is simply not required)."""
    return _without_noise(schema.model_json_schema())  # type: ignore[no-any-return]


_NOISE = {"discriminator", "description", "default"}


def _without_noise(node: Any, in_properties: bool = False) -> Any:
    if isinstance(node, dict):
        return {
            k: _without_noise(v, k == "properties")
            for k, v in node.items()
            # a key inside "properties" is a field's name, never noise
            if in_properties or (k not in _NOISE and not (k == "title" and isinstance(v, str)))
        }
    if isinstance(node, list):
        return [_without_noise(v) for v in node]
    return node


JSON_INSTRUCTION = "Reply with exactly one JSON object and nothing else (no prose, no code fence)."


def json_instruction(schema: type[BaseModel]) -> str:
    schema_text = compact_json(compact_schema(schema))
    return f"{JSON_INSTRUCTION} It must follow this JSON schema:\n{schema_text}"


def with_json_instruction(messages: list[Message], schema: type[BaseModel]) -> list[Message]:
    """A copy of `messages` whose system message also asks for JSON following `schema`."""
    instruction = json_instruction(schema)
    if (
        messages
        and messages[0].get("role") == "system"
        and isinstance(messages[0].get("content"), str)
    ):
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{instruction}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": instruction}, *messages]


def check_model(model: str) -> None:
    """Raise UsageError unless litellm can tell `model`'s provider (before any draft is written).

    >>> check_model("gpt-4o-mini")              # doctest: +SKIP
    >>> check_model("gtp-4o")                   # doctest: +SKIP
    Traceback (most recent call last):
    UsageError: unknown model 'gtp-4o': litellm cannot tell its provider ...
    """
    from flowstate.llm._litellm import litellm

    if model.startswith("flowstate-scripted/"):
        from flowstate.llm._provider import install

        install()  # scripted models answer through the custom provider
    try:
        litellm.get_llm_provider(model=model)
    except Exception as e:
        raise UsageError(
            f"unknown model {model!r}: litellm cannot tell its provider; use a litellm model "
            "name such as gpt-4o-mini or anthropic/claude-3-5-haiku-latest"
        ) from e
    missing = missing_credentials(model)
    if missing:
        raise UsageError(
            f"model {model!r} needs {' and '.join(missing)} in the environment, and "
            f"{'it is' if len(missing) == 1 else 'they are'} not set"
        )


def missing_credentials(model: str) -> list[str]:
    """The provider's API key variables litellm expects for `model` that are unset (a key a
    call cannot work without; a base URL with a default, like Ollama's, is not counted)."""
    from flowstate.llm._litellm import litellm

    try:
        found = litellm.validate_environment(model=model)
    except Exception:
        return []  # litellm cannot tell: the call itself will say
    keys = [k for k in found.get("missing_keys") or [] if isinstance(k, str)]
    return [k for k in keys if k.endswith(("_API_KEY", "_ACCESS_KEY_ID", "_TOKEN"))]


# Provider messages that mean the call can never work as configured: retrying only delays the
# error (litellm reports a missing OpenAI key as an InternalServerError, for instance).
_CONFIGURATION = re.compile(
    r"missing credentials|api[_ ]?key|authenticat|unauthori[sz]ed|permission denied|"
    r"llm provider not provided|model.{0,40}(?:not found|does not exist)|invalid model",
    re.IGNORECASE,
)


def is_configuration_error(error: Exception) -> bool:
    """A failure no retry can fix: bad or missing credentials, unknown model or provider."""
    from flowstate.llm._litellm import litellm

    permanent = (
        litellm.AuthenticationError,
        litellm.PermissionDeniedError,
        litellm.NotFoundError,
    )
    if isinstance(error, permanent):
        return True
    status = getattr(error, "status_code", None)
    if status in (401, 403, 404):
        return True
    return bool(_CONFIGURATION.search(str(getattr(error, "message", None) or error)))


def is_transient(error: Exception) -> bool:
    """Worth retrying: rate limits, timeouts, connection failures, server errors; never a
    configuration error, whatever class the provider reported it as."""
    from flowstate.llm._litellm import litellm

    if is_configuration_error(error):
        return False

    transient = (
        litellm.RateLimitError,
        litellm.Timeout,
        litellm.APIConnectionError,
        litellm.ServiceUnavailableError,
        litellm.InternalServerError,
        litellm.BadGatewayError,
    )
    if isinstance(error, transient):
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and (status in _RETRY_STATUS or status >= 500)


# litellm prefixes messages with `litellm.RateLimitError: OpenAIException - `; the class name
# is reported separately, so the prefixes are noise.
_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|[\w-]+Exception - )+")


def _detail(error: Exception, limit: int = 500) -> str:
    text = str(getattr(error, "message", None) or error)
    text = _LITELLM_PREFIX.sub("", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"
