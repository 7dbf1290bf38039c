"""Run by the adapters' crash tests in a child process: a framework's agent begins a request
(telling the test its id and handle), records a state, then dies in a tool call as a crash
would: no cleanup, no commit, no discard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from flowstate import FlowState
from flowstate.settings import Neo4jSettings
from tests.integrations import scenario as sc


def die() -> str:
    """Simulates the process being killed."""
    os._exit(17)


def main(framework: str, uri: str, namespace: str, began: str) -> None:
    def keep(request_id: str, handle: str) -> None:
        Path(began).write_text(json.dumps({"request_id": request_id, "handle": handle}))

    record = {"delta": [sc.BUDGET]}
    fs = FlowState.connect(settings=Neo4jSettings(uri=uri), namespace=namespace)
    runs = {
        "pydantic_ai": pydantic_ai,
        "langchain": langchain,
        "openai_agents": openai_agents,
        "adk": adk,
    }
    runs[framework](fs, keep, record)
    sys.exit("the run should not have finished")


def pydantic_ai(fs: FlowState, keep: Any, record: dict[str, Any]) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from flowstate.integrations.pydantic_ai import FlowStateCapability

    turns = [ToolCallPart("memory_record", record), ToolCallPart("die", {})]

    def reply(messages: Any, info: Any) -> ModelResponse:
        return ModelResponse(parts=[turns.pop(0)])

    memory = FlowStateCapability(fs, on_begin=keep)
    Agent(FunctionModel(reply), tools=[die], capabilities=[memory]).run_sync(sc.FIRST)


def langchain(fs: FlowState, keep: Any, record: dict[str, Any]) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from flowstate.integrations.langchain import FlowStateMiddleware
    from tests.integrations.fake_chat import ScriptedChat

    model = ScriptedChat.of(
        [
            AIMessage("", tool_calls=[{"name": "memory_record", "args": record, "id": "c1"}]),
            AIMessage("", tool_calls=[{"name": "die", "args": {}, "id": "c2"}]),
        ]
    )
    memory = FlowStateMiddleware(fs, on_begin=keep)
    agent = create_agent(model, tools=[tool(die)], middleware=[memory])
    agent.invoke({"messages": [{"role": "user", "content": sc.FIRST}]})


def openai_agents(fs: FlowState, keep: Any, record: dict[str, Any]) -> None:
    from agents import Agent, RunConfig, function_tool
    from agents.testing import ScriptedModel, function_call

    from flowstate.integrations.openai_agents import FlowStateRunner

    model = ScriptedModel(
        [
            [function_call("memory_record", record, call_id="c1")],
            [function_call("die", {}, call_id="c2")],
        ]
    )
    agent = Agent(name="travel", model=model, tools=[function_tool(die)])
    config = RunConfig(tracing_disabled=True)
    FlowStateRunner(fs, on_begin=keep).run_sync(agent, sc.FIRST, run_config=config)


def adk(fs: FlowState, keep: Any, record: dict[str, Any]) -> None:
    import asyncio

    from google.adk.agents import LlmAgent
    from google.adk.apps import App
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    from flowstate.integrations.adk import FlowStatePlugin
    from tests.integrations.scripted_llm import ScriptedLlm

    model = ScriptedLlm.of([[("memory_record", record)], [("die", {})]])
    agent = LlmAgent(name="travel", model=model, tools=[die])
    app = App(name="trips", root_agent=agent, plugins=[FlowStatePlugin(fs, on_begin=keep)])
    runner = InMemoryRunner(app=app)
    session = asyncio.run(runner.session_service.create_session(app_name="trips", user_id="ana"))
    text = types.Content(role="user", parts=[types.Part(text=sc.FIRST)])
    for _ in runner.run(user_id="ana", session_id=session.id, new_message=text):
        pass


def crash(
    framework: str, neo4j_settings: Neo4jSettings, namespace: str, tmp_path: Path
) -> tuple[str, str]:
    """Run the worker for `framework`; the request id and handle it was told at the begin."""
    began = tmp_path / "began.json"
    done = subprocess.run(
        [sys.executable, __file__, framework, neo4j_settings.uri, namespace, str(began)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert done.returncode == 17, done.stderr[-2000:]
    ref: dict[str, str] = json.loads(began.read_text())
    return ref["request_id"], ref["handle"]


if __name__ == "__main__":
    main(*sys.argv[1:])
