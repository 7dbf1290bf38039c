"""The litellm custom provider behind `flowstate-scripted/<name>` models.

Imported lazily (it imports litellm). litellm strips the provider prefix, so the handler
receives the script's name as `model`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from typing import Any

from flowstate.llm._litellm import litellm
from flowstate.llm.registry import PROVIDER, Message, ScriptError, ToolCalls, lookup
from flowstate.tokens import count_request, count_tokens

# Through the module object, never `from litellm import ...`: import sorting would hoist that
# above flowstate.llm._litellm, which has to set the environment first.
CustomLLMError = litellm.llms.custom_llm.CustomLLMError
ChatCompletionMessageToolCall = litellm.types.utils.ChatCompletionMessageToolCall
Function = litellm.types.utils.Function

_install_lock = threading.Lock()


class ScriptedProvider(litellm.CustomLLM):
    """Answers from the registry of scripted models, billing like a provider: the usage counts
    everything the call sent (messages, `response_format`, tool definitions), by tiktoken."""

    def completion(self, model: str, messages: list[Message], *args: Any, **kwargs: Any) -> Any:
        optional = kwargs.get("optional_params") or {}
        response_format, tools = optional.get("response_format"), optional.get("tools")
        try:
            script = lookup(model)
            text = script.answer(messages, response_format)
        except ScriptError as e:
            # CustomLLMError carries the status litellm maps to its exception classes
            # (429 -> RateLimitError, 503 -> ServiceUnavailableError, 400 -> BadRequestError).
            raise CustomLLMError(status_code=e.status, message=str(e)) from e  # type: ignore[no-untyped-call]
        response = kwargs["model_response"]
        message = response.choices[0].message
        if isinstance(text, ToolCalls):
            message.content = None
            message.tool_calls = [
                ChatCompletionMessageToolCall(
                    id=f"call_{len(messages)}_{n}",  # unique within a conversation
                    type="function",
                    function=Function(name=name, arguments=json.dumps(arguments)),
                )
                for n, (name, arguments) in enumerate(text.calls, start=1)
            ]
            response.choices[0].finish_reason = "tool_calls"
            # What a provider bills of a call it writes: the name and the arguments.
            completion = sum(
                count_tokens(name) + count_tokens(json.dumps(arguments))
                for name, arguments in text.calls
            )
        else:
            message.content = text
            response.choices[0].finish_reason = "stop"
            completion = count_tokens(text)
        response.model = f"{PROVIDER}/{model}"
        prompt = count_request(messages, response_format, tools)
        response.usage = litellm.Usage(
            prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion
        )
        return response

    async def acompletion(
        self, model: str, messages: list[Message], *args: Any, **kwargs: Any
    ) -> Any:
        # Off the event loop, as a real provider's call is: a script may block (or act as
        # another process against Neo4j) while the agent's draft save runs on the loop.
        call = functools.partial(self.completion, model, messages, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(None, call)


_provider = ScriptedProvider()


def install() -> None:
    """Add the provider to `litellm.custom_provider_map` unless an entry for it is there."""
    with _install_lock:
        if not any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
            litellm.custom_provider_map.append({"provider": PROVIDER, "custom_handler": _provider})
