"""LangChain's own fake chat model (`GenericFakeChatModel`: scripted replies, sync and async),
able to take tools as a provider's chat model does, and keeping what each call was sent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool


class ScriptedChat(GenericFakeChatModel):
    prompts: list[str] = []
    tools: list[dict[str, Any]] = []

    @classmethod
    def of(cls, replies: Sequence[AIMessage | str]) -> ScriptedChat:
        return cls(messages=iter(replies), prompts=[], tools=[])

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        """The tools as the provider would be sent them; the replies stay scripted."""
        self.tools.append(
            {
                schema["function"]["name"]: schema["function"].get("parameters", {})
                for schema in map(convert_to_openai_tool, tools)
            }
        )
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.prompts.append("\n".join(m.text for m in messages))
        return super()._generate(messages, stop, run_manager, **kwargs)
