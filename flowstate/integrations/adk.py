"""FlowState in Google's Agent Development Kit (`pip install 'flowstate-memory[adk]'`).

    memory = FlowStatePlugin(fs, consequential={"book_hotel"})
    runner = Runner(app=App(name="trips", root_agent=agent, plugins=[memory]),
                    session_service=sessions, memory_service=FlowStateMemoryService(fs))

A run (`runner.run_async` or `runner.run`: one ADK invocation) is one FlowState request,
begun with the user's message. The plugin's callbacks carry the rest: `before_model_callback`
puts the index, brought up to date, in the system instruction, adds the memory tools
(`memory_reveal`, `memory_record`, `memory_search`) and a `cites` parameter on each
consequential tool; `before_tool_callback` runs FlowState's guard before a consequential tool
(refused: the tool does not run and the model reads the reason); `after_tool_callback` keeps
each tool result as an observation (the model reads the id to cite); `after_run_callback`
commits with the final response, `on_run_error_callback` discards. A run the process never
finished leaves its draft: the caller resumes it with `state_delta=memory.resuming(...)`.

`FlowStateMemoryService` is ADK's memory service over the same namespace: `search_memory`
finds past states (their index lines, as `memory_search` gives them).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from google.adk.memory import BaseMemoryService
from google.adk.memory.base_memory_service import SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.base_tool import BaseTool
from google.genai import types
from pydantic_core import to_json

from flowstate.compact.arguments import Refused
from flowstate.errors import UsageError
from flowstate.integrations import memory as m
from flowstate.integrations.runs import AsyncRun, OnBegin, Resume, ThreadedRun, start_async

if TYPE_CHECKING:
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.events.event import Event
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse
    from google.adk.sessions.session import Session
    from google.adk.tools.tool_context import ToolContext

    from flowstate.api import FlowState
    from flowstate.async_api import AsyncFlowState

__all__ = ["FlowStateMemoryService", "FlowStatePlugin"]

ActiveRun = AsyncRun | ThreadedRun
# Where a run's input names the request it picks up: a `temp:` key of the session state,
# which lasts the invocation and is never persisted by the session service.
RESUME_KEY = "temp:flowstate"


class FlowStatePlugin(BasePlugin):
    """FlowState's memory for every run of a `Runner` it is a plugin of, in `fs`'s namespace
    (bound here: nothing the model sends names another). `fs` is a `FlowState` (its calls
    run in a worker thread; `runner.run` and `runner.run_async`) or an `AsyncFlowState`
    opened on the loop `runner.run_async` runs on.

    `consequential`: the names of the tools FlowState's guard must approve before they run.
    `on_begin(request_id, handle)` is told each request as it begins: keep them to resume it
    after a crash (`resuming`)."""

    def __init__(
        self,
        fs: FlowState | AsyncFlowState,
        *,
        consequential: Collection[str] = (),
        on_begin: OnBegin | None = None,
        name: str = "flowstate",
    ) -> None:
        super().__init__(name)
        self.fs = fs
        self.consequential = frozenset(consequential)
        self.on_begin = on_begin
        self.tools: list[BaseTool] = [_MemoryTool(self, n) for n in m.TOOLS]
        self._runs: dict[str, ActiveRun] = {}  # by ADK invocation id
        self._answers: dict[str, str] = {}
        self._named: dict[str, set[str]] = {}  # the tools the app's agents name, by invocation
        self._refused: set[str | None] = set()  # calls the guard refused: nothing to keep

    @staticmethod
    def resuming(request_id: str, handle: str) -> dict[str, Any]:
        """The `state_delta` of a run that picks up the open request `request_id` (of the
        client holding `handle`) from its draft."""
        return {RESUME_KEY: {"request_id": request_id, "handle": handle}}

    # -- the run: begin, then commit, discard or leave -----------------------------------------

    async def before_run_callback(
        self, *, invocation_context: InvocationContext
    ) -> types.Content | None:
        ref = invocation_context.session.state.get(RESUME_KEY)
        resume = Resume(str(ref["request_id"]), str(ref["handle"])) if ref else None
        text = _text(invocation_context.user_content)
        run = await start_async(self.fs, text, resume, self.on_begin)
        self._runs[invocation_context.invocation_id] = run
        self._named[invocation_context.invocation_id] = _tool_names(invocation_context.agent)
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        if event.author != "user" and event.is_final_response() and event.content:
            self._answers[invocation_context.invocation_id] = _text(event.content)
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        run = self._runs.pop(invocation_context.invocation_id, None)
        answer = self._answers.pop(invocation_context.invocation_id, None)
        self._named.pop(invocation_context.invocation_id, None)
        if run is None:
            return
        if answer is None:  # the caller stopped reading, or the run was aborted: resume it
            await run.leave()
            return
        await run.commit(answer)

    async def on_run_error_callback(
        self, *, invocation_context: InvocationContext, error: Exception
    ) -> None:
        run = self._runs.pop(invocation_context.invocation_id, None)
        self._answers.pop(invocation_context.invocation_id, None)
        self._named.pop(invocation_context.invocation_id, None)
        if run is not None:
            await run.fail()

    # -- model calls ----------------------------------------------------------------------------

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        run = self._run(callback_context.invocation_id)
        named = self._named.get(callback_context.invocation_id, set())
        missing = sorted(self.consequential - named - set(llm_request.tools_dict))
        if missing:  # a misspelt name would leave its tool unguarded
            raise UsageError(f"consequential tools not among the agent's tools: {missing}")
        for tool in llm_request.config.tools or []:
            for declaration in getattr(tool, "function_declarations", None) or []:
                if declaration.name in self.consequential:
                    _add_cites(declaration)
        llm_request.append_tools([t for t in self.tools if t.name not in llm_request.tools_dict])
        llm_request.append_instructions([await run.instructions()])
        return None

    # -- tool calls -----------------------------------------------------------------------------

    async def before_tool_callback(
        self, *, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        if tool.name not in self.consequential:
            return None
        run = self._run(tool_context.invocation_id)
        try:
            arguments, cites = m.split_cites(tool_args)
        except Refused as e:
            return self._refuse(tool_context, str(e))
        verdict = await run.guard(tool.name, arguments, cites)
        if not verdict.approved:
            return self._refuse(tool_context, m.refused_text(tool.name, verdict.reason))
        tool_args.pop(m.CITES, None)  # the tool is called with its own arguments
        return None

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: Any,
    ) -> dict[str, Any] | None:
        if tool.name in m.TOOLS:
            return None
        if tool_context.function_call_id in self._refused:  # ADK calls this after a refusal
            self._refused.discard(tool_context.function_call_id)
            return None
        run = self._run(tool_context.invocation_id)
        arguments = {k: v for k, v in tool_args.items() if k != m.CITES}
        # A function's text comes as it is or as {"result": text}; anything else as JSON.
        wrapped = isinstance(result, dict) and list(result) == ["result"]
        text = result["result"] if wrapped else result
        output = text if isinstance(text, str) else to_json(result).decode()
        is_error = isinstance(result, dict) and "error" in result
        oid = await run.observe(tool.name, arguments, output, is_error)
        if isinstance(text, str):
            return {"result": m.kept_text(text, oid)}
        note = m.kept_text("", oid).lstrip("\n")
        return (
            {**result, "flowstate": note}
            if isinstance(result, dict)
            else {"result": output, "flowstate": note}
        )

    # -- shared -----------------------------------------------------------------------------------

    def _refuse(self, tool_context: ToolContext, reason: str) -> dict[str, Any]:
        self._refused.add(tool_context.function_call_id)
        return {"error": reason}

    def _run(self, invocation_id: str) -> ActiveRun:
        run = self._runs.get(invocation_id)
        if run is None:
            raise UsageError(
                "FlowStatePlugin: no run has begun (is it among the runner's plugins?)"
            )
        return run


class _MemoryTool(BaseTool):
    """One of FlowState's memory tools, answered by the run of the invocation that calls it."""

    def __init__(self, plugin: FlowStatePlugin, name: str) -> None:
        model, description = m.TOOLS[name]
        super().__init__(name=name, description=description)
        self._plugin = plugin
        schema = model.model_json_schema()
        schema.pop("title", None)
        self._schema = schema

    def _get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name, description=self.description, parameters_json_schema=self._schema
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        try:
            return {
                "result": await self._plugin._run(tool_context.invocation_id).call(self.name, args)
            }
        except Refused as e:
            return {"error": str(e)}


class FlowStateMemoryService(BaseMemoryService):
    """ADK's memory service over `fs`'s namespace (bound here: ADK's `app_name` and `user_id`
    do not pick another; give each tenant its own `FlowState`).

    `search_memory` gives the states that match, each as its index line (id, category,
    summary), as `memory_search` does: their content opens with `memory_reveal`. Adding a
    session or events stores nothing: `FlowStatePlugin` records each run as it happens, with
    the states its model recorded, and a transcript carries no state to add."""

    def __init__(self, fs: FlowState | AsyncFlowState, *, limit: int = 10) -> None:
        self.fs = fs
        self.limit = limit

    async def add_session_to_memory(self, session: Session) -> None:
        return None

    async def add_events_to_memory(
        self,
        *,
        app_name: str,
        user_id: str,
        events: Sequence[Event],
        session_id: str | None = None,
        custom_metadata: Mapping[str, object] | None = None,
    ) -> None:
        return None

    async def search_memory(
        self, *, app_name: str, user_id: str, query: str
    ) -> SearchMemoryResponse:
        from flowstate.api import FlowState

        if isinstance(self.fs, FlowState):
            hits = await asyncio.to_thread(self.fs.search, query, self.limit)
        else:
            hits = await self.fs.search(query, self.limit)
        return SearchMemoryResponse(
            memories=[
                MemoryEntry(
                    id=hit.id,
                    author="flowstate",
                    content=types.Content(
                        role="user",
                        parts=[types.Part(text=f"{hit.id} [{hit.category.value}] {hit.summary}")],
                    ),
                    custom_metadata={
                        "request_id": hit.request_id,
                        "category": hit.category.value,
                        "superseded_by": hit.superseded_by,
                    },
                )
                for hit in hits
            ]
        )


def _add_cites(declaration: types.FunctionDeclaration) -> None:
    """`cites` among a consequential tool's parameters (required: the model says what the
    call relies on, even when that is nothing)."""
    if m.CITES in str(declaration.parameters_json_schema or declaration.parameters or ""):
        return  # added at an earlier model call of the run
    if declaration.parameters_json_schema is not None or declaration.parameters is None:
        schema = declaration.parameters_json_schema or {"type": "object", "properties": {}}
        declaration.parameters_json_schema = m.with_cites(dict(schema))
        return
    params = declaration.parameters
    params.properties = {
        **(params.properties or {}),
        m.CITES: types.Schema(
            type=types.Type.ARRAY,
            items=types.Schema(type=types.Type.STRING),
            description=m.CITES_SCHEMA["description"],
        ),
    }
    params.required = [*(params.required or []), m.CITES]


def _tool_names(agent: Any) -> set[str]:
    """The names of the tools the agents of an app list (a toolset's come with the model
    request of the agent that has it)."""
    root = getattr(agent, "root_agent", agent)
    names: set[str] = set()
    stack = [root]
    while stack:
        current = stack.pop()
        for tool in getattr(current, "tools", None) or []:
            if isinstance(tool, BaseTool):
                names.add(tool.name)
            elif callable(tool) and hasattr(tool, "__name__"):
                names.add(tool.__name__)
        stack.extend(getattr(current, "sub_agents", None) or [])
    return names


def _text(content: types.Content | None) -> str:
    parts = content.parts if content is not None and content.parts else []
    return "\n".join(p.text for p in parts if p.text and not p.thought)
