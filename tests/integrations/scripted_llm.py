"""An ADK model (`BaseLlm`) that returns scripted responses: each turn's function calls, or
its final text, and keeps what each call was prompted with (the system instruction and the
contents, as text) and offered (each tool's parameters)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from tests.integrations import scenario as sc


class ScriptedLlm(BaseLlm):
    turns: list[sc.Turn | Exception] = []
    prompts: list[str] = []
    tools: list[dict[str, Any]] = []

    @classmethod
    def of(cls, turns: list[sc.Turn | Exception]) -> ScriptedLlm:
        return cls(model="scripted", turns=list(turns), prompts=[], tools=[])

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.prompts.append(_prompt(llm_request))
        self.tools.append(_tools(llm_request))
        turn = self.turns.pop(0)
        if isinstance(turn, Exception):
            raise turn
        n = len(self.prompts)
        if isinstance(turn, str):
            parts = [types.Part(text=turn)]
        else:
            parts = [
                types.Part(function_call=types.FunctionCall(name=name, args=args, id=f"c{n}_{i}"))
                for i, (name, args) in enumerate(turn)
            ]
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1, candidates_token_count=1, total_token_count=2
        )
        yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)


def _prompt(request: LlmRequest) -> str:
    texts = [str(request.config.system_instruction or "")]
    for content in request.contents:
        for part in content.parts or []:
            if part.text:
                texts.append(part.text)
            if part.function_response and part.function_response.response:
                texts.extend(str(v) for v in part.function_response.response.values())
    return "\n".join(texts)


def _tools(request: LlmRequest) -> dict[str, Any]:
    offered: dict[str, Any] = {}
    for tool in request.config.tools or []:
        for declaration in getattr(tool, "function_declarations", None) or []:
            params = declaration.parameters_json_schema
            if params is None and declaration.parameters is not None:
                params = declaration.parameters.model_dump(exclude_none=True)
            offered[declaration.name] = params
    return offered
