"""FlowState as a LangChain agent middleware (`pip install 'flowstate-memory[langchain]'`).

    memory = FlowStateMiddleware(fs, consequential={"book_hotel"})
    agent = create_agent(model, tools=[search_hotels, book_hotel], middleware=[memory])
    agent.invoke({"messages": [{"role": "user", "content": "Book us a hotel in Lisbon"}]})

A run of the agent is one FlowState request, begun with the last user message. Every model
call gets the index in its system message and the memory tools (`memory_reveal`,
`memory_record`, `memory_search`); every tool result is kept as an observation (the model
reads the id to cite); a consequential tool takes `cites` and runs only when FlowState's guard
approves. The run commits when the agent ends, is discarded when a model or tool call fails,
and leaves its draft when the process stops. The request rides in the agent's state
(`flowstate`: request id and handle): a checkpointed thread picks it up from there, and a
caller resumes it by passing `{"flowstate": {"request_id": ..., "handle": ...}}` with the
messages. `invoke` needs a `FlowState`; `ainvoke` takes either front door.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, TypedDict

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import OmitFromOutput
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.errors import GraphBubbleUp
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from flowstate.compact.arguments import Refused
from flowstate.errors import UsageError
from flowstate.integrations import memory as m
from flowstate.integrations.runs import AsyncRun, OnBegin, Resume, Run, ThreadedRun, start_async

if TYPE_CHECKING:
    from flowstate.api import FlowState
    from flowstate.async_api import AsyncFlowState

__all__ = ["FlowStateMiddleware", "FlowStateState"]

ToolResult = ToolMessage | Command[Any]


class RequestRef(TypedDict):
    request_id: str
    handle: str


class FlowStateState(AgentState[Any]):
    """The agent's state with the run's open request (None once it is committed)."""

    flowstate: NotRequired[Annotated[RequestRef | None, OmitFromOutput]]


class FlowStateMiddleware(AgentMiddleware[FlowStateState, Any, Any]):
    """FlowState's memory for every run of an agent, in `fs`'s namespace (bound here: nothing
    the model sends names another).

    `consequential`: the names of the tools FlowState's guard must approve before they run.
    `on_begin(request_id, handle)` is told each request as it begins: keep them to resume it
    after a crash."""

    state_schema = FlowStateState

    def __init__(
        self,
        fs: FlowState | AsyncFlowState,
        *,
        consequential: Collection[str] = (),
        on_begin: OnBegin | None = None,
    ) -> None:
        self.fs = fs
        self.consequential = frozenset(consequential)
        self.on_begin = on_begin
        self.tools = [_memory_tool(name) for name in m.TOOLS]
        self._runs: dict[str, Run] = {}
        self._aruns: dict[str, asyncio.Task[AsyncRun | ThreadedRun]] = {}
        self._lock = threading.Lock()

    # -- sync ---------------------------------------------------------------------------------

    def before_agent(self, state: FlowStateState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        ref = state.get("flowstate")
        if ref is not None:  # the thread's request, or one the caller resumes
            self._run(state)
            return None
        run = Run.start(self._sync_fs(), _user_text(state), None, self.on_begin)
        with self._lock:
            self._runs[run.request_id] = run
        return {"flowstate": _ref(run.request_id, run.handle)}

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any]:
        run = self._run(request.state)
        try:
            return handler(self._prepared(request, run.instructions()))
        except GraphBubbleUp:
            raise
        except Exception:
            self._forget(run.request_id)
            run.fail()
            raise

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        run = self._run(request.state)
        call = request.tool_call
        name, call_id = call["name"], call["id"] or ""
        if name in m.TOOLS:
            try:
                return _reply(name, call_id, run.call(name, call["args"]))
            except Refused as e:
                return _reply(name, call_id, str(e), error=True)
        try:
            arguments, cites = self._split(name, call["args"])
        except Refused as e:
            return _reply(name, call_id, str(e), error=True)
        if name in self.consequential:
            verdict = run.guard(name, arguments, cites)
            if not verdict.approved:
                return _reply(name, call_id, m.refused_text(name, verdict.reason), error=True)
            request = request.override(tool_call={**call, "args": arguments})
        try:
            result = handler(request)
        except GraphBubbleUp:
            raise
        except Exception:
            self._forget(run.request_id)
            run.fail()
            raise
        if not isinstance(result, ToolMessage):
            return result  # a Command: the tool updates the state itself
        output = result.text
        oid = run.observe(name, arguments, output, result.status == "error")
        return _kept(result, oid)

    def after_agent(self, state: FlowStateState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        run = self._run(state)
        self._forget(run.request_id)
        run.commit(_answer(state))
        return {"flowstate": None}

    # -- async --------------------------------------------------------------------------------

    async def abefore_agent(
        self, state: FlowStateState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        if state.get("flowstate") is not None:
            await self._arun(state)
            return None
        run = await start_async(self.fs, _user_text(state), None, self.on_begin)
        self._aruns[run.request_id] = _done(run)
        return {"flowstate": _ref(run.request_id, run.handle)}

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        run = await self._arun(request.state)
        try:
            return await handler(self._prepared(request, await run.instructions()))
        except GraphBubbleUp:
            raise
        except Exception:
            self._aruns.pop(run.request_id, None)
            await run.fail()
            raise

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        run = await self._arun(request.state)
        call = request.tool_call
        name, call_id = call["name"], call["id"] or ""
        if name in m.TOOLS:
            try:
                return _reply(name, call_id, await run.call(name, call["args"]))
            except Refused as e:
                return _reply(name, call_id, str(e), error=True)
        try:
            arguments, cites = self._split(name, call["args"])
        except Refused as e:
            return _reply(name, call_id, str(e), error=True)
        if name in self.consequential:
            verdict = await run.guard(name, arguments, cites)
            if not verdict.approved:
                return _reply(name, call_id, m.refused_text(name, verdict.reason), error=True)
            request = request.override(tool_call={**call, "args": arguments})
        try:
            result = await handler(request)
        except GraphBubbleUp:
            raise
        except Exception:
            self._aruns.pop(run.request_id, None)
            await run.fail()
            raise
        if not isinstance(result, ToolMessage):
            return result
        oid = await run.observe(name, arguments, result.text, result.status == "error")
        return _kept(result, oid)

    async def aafter_agent(
        self, state: FlowStateState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        run = await self._arun(state)
        self._aruns.pop(run.request_id, None)
        await run.commit(_answer(state))
        return {"flowstate": None}

    # -- shared -------------------------------------------------------------------------------

    def _sync_fs(self) -> FlowState:
        from flowstate.api import FlowState

        if not isinstance(self.fs, FlowState):
            raise UsageError("FlowStateMiddleware over an AsyncFlowState runs with ainvoke/astream")
        return self.fs

    def _run(self, state: Any) -> Run:
        """The run of the request in `state`: this process's, else picked up from its draft."""
        ref = _request(state)
        with self._lock:
            run = self._runs.get(ref["request_id"])
            if run is None:
                resume = Resume(ref["request_id"], ref["handle"])
                run = Run.start(self._sync_fs(), "", resume, None)
                self._runs[run.request_id] = run
            return run

    def _forget(self, request_id: str) -> None:
        with self._lock:
            self._runs.pop(request_id, None)

    async def _arun(self, state: Any) -> AsyncRun | ThreadedRun:
        ref = _request(state)
        task = self._aruns.get(ref["request_id"])
        if task is None:  # one pick-up, however many parallel tool calls wait for it
            resume = Resume(ref["request_id"], ref["handle"])
            task = asyncio.ensure_future(start_async(self.fs, "", resume, None))
            self._aruns[ref["request_id"]] = task
        try:
            return await task
        except BaseException:
            self._aruns.pop(ref["request_id"], None)
            raise

    def _split(self, name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        if name in self.consequential:
            return m.split_cites(arguments)
        return arguments, []

    def _prepared(self, request: ModelRequest[Any], instructions: str) -> ModelRequest[Any]:
        """The model call with the memory's instructions, and `cites` on consequential tools."""
        names = {t.name if isinstance(t, BaseTool) else t.get("name") for t in request.tools}
        names |= {t.get("function", {}).get("name") for t in request.tools if isinstance(t, dict)}
        missing = sorted(self.consequential - names)
        if missing:  # a misspelt name would leave its tool unguarded
            raise UsageError(f"consequential tools not among the agent's tools: {missing}")
        tools = [
            _with_cites(t) if isinstance(t, BaseTool) and t.name in self.consequential else t
            for t in request.tools
        ]
        before = request.system_message.text if request.system_message is not None else ""
        system = f"{before}\n\n{instructions}" if before else instructions
        return request.override(system_message=SystemMessage(content=system), tools=tools)


def _memory_tool(name: str) -> StructuredTool:
    model, description = m.TOOLS[name]

    def outside(**_arguments: Any) -> str:
        raise UsageError(f"{name} runs inside FlowStateMiddleware's agent only")

    return StructuredTool.from_function(
        func=outside, name=name, description=description, args_schema=model
    )


def _with_cites(tool: BaseTool) -> dict[str, Any]:
    schema = convert_to_openai_tool(tool)
    function = schema["function"]
    params = function.get("parameters", {"type": "object", "properties": {}})
    return {**schema, "function": {**function, "parameters": m.with_cites(params)}}


def _reply(name: str, call_id: str, text: str, *, error: bool = False) -> ToolMessage:
    return ToolMessage(
        content=text, name=name, tool_call_id=call_id, status="error" if error else "success"
    )


def _kept(result: ToolMessage, observation_id: str) -> ToolMessage:
    note = m.kept_text("", observation_id).lstrip("\n")
    if isinstance(result.content, str):
        content: Any = f"{result.content}\n{note}"
    else:
        content = [*result.content, {"type": "text", "text": note}]
    return result.model_copy(update={"content": content})


def _ref(request_id: str, handle: str) -> RequestRef:
    return {"request_id": request_id, "handle": handle}


def _request(state: Any) -> RequestRef:
    ref = state.get("flowstate") if isinstance(state, dict) else None
    if not ref:
        raise UsageError("no FlowState request in the agent's state: is the middleware listed?")
    return RequestRef(request_id=str(ref["request_id"]), handle=str(ref["handle"]))


def _user_text(state: Any) -> str:
    humans = [msg for msg in state.get("messages", []) if isinstance(msg, HumanMessage)]
    return humans[-1].text if humans else ""


def _answer(state: Any) -> str:
    if state.get("structured_response") is not None:
        return m.answer_text(state["structured_response"])
    replies = [msg for msg in state.get("messages", []) if isinstance(msg, AIMessage)]
    return replies[-1].text if replies else ""


def _done(run: AsyncRun | ThreadedRun) -> asyncio.Task[AsyncRun | ThreadedRun]:
    async def ready() -> AsyncRun | ThreadedRun:
        return run

    return asyncio.ensure_future(ready())
