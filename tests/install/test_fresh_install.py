"""Fresh venvs with one extra each, against a real Neo4j: with only the MCP extra, `flowstate
mcp` and the memory commands run without litellm (or the dev and bench tools); with only the
pydantic-ai extra, its capability runs without litellm or any other framework. Slow (pip
builds the wheel and fetches the dependencies): opt-in with `-m install`, run by CI."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from flowstate.settings import Neo4jSettings

pytestmark = [pytest.mark.install, pytest.mark.neo4j]
ROOT = Path(__file__).resolve().parents[2]


def _size_mb(folder: Path) -> float:
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return total / 1e6


def test_the_mcp_extra_alone_serves_memory_without_litellm(
    tmp_path: Path, neo4j_settings: Neo4jSettings
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"{ROOT}[mcp]"], check=True, timeout=900)
    python = str(venv / "bin" / "python")
    for absent in ("litellm", "rich", "pytest", "flowstate_bench"):
        probe = subprocess.run([python, "-c", f"import {absent}"], capture_output=True)
        assert probe.returncode != 0, f"{absent} was installed with the mcp extra"
    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    )
    packages = len(listed.stdout.split())
    print(f"fresh [mcp] venv: {packages} packages, {_size_mb(venv):.0f} MB")

    namespace = f"t_fresh_{uuid.uuid4().hex[:8]}"
    flowstate = str(venv / "bin" / "flowstate")
    env = {**os.environ, "FLOWSTATE_NEO4J_URI": neo4j_settings.uri}

    async def run() -> tuple[dict, dict]:
        params = StdioServerParameters(command=flowstate, args=["mcp", "-N", namespace], env=env)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            fact = await session.call_tool(
                "memory_remember", {"summary": "Likes green tea", "category": "preference"}
            )
            found = await session.call_tool("memory_search", {"query": "green tea"})
            return (
                fact.model_dump(by_alias=True)["structuredContent"],
                found.model_dump(by_alias=True)["structuredContent"],
            )

    try:
        fact, found = asyncio.run(run())
        assert fact["state_id"] == "r1.likes_green_tea"
        assert list(found["hits"]) == ["r1.likes_green_tea"]
        index = subprocess.run(
            [flowstate, "index", "-N", namespace], env=env, capture_output=True, text=True
        )
        assert index.returncode == 0 and "r1.likes_green_tea" in index.stdout
        refused = subprocess.run(
            [flowstate, "run", "hi", "-N", namespace, "-m", "gpt-4o-mini"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert refused.returncode == 2 and "flowstate-memory[agent]" in refused.stderr
        # The help starts with what this install runs: not the demo, which needs the agent extra.
        helped = subprocess.run([flowstate, "--help"], env=env, capture_output=True, text=True)
        start = helped.stdout[helped.stdout.index("Start here") :].split("\n\n")[0]
        assert "flowstate mcp -N trips --print-config" in start
        assert "flowstate demo " not in start and "flowstate-memory[agent]" in start
    finally:
        subprocess.run(
            [flowstate, "forget", "--all", "--yes", "-N", namespace], env=env, capture_output=True
        )


# What `[pydantic-ai]` must not bring: litellm, another framework, the full pydantic-ai.
NOT_WITH_PYDANTIC_AI = {
    "litellm",
    "pydantic-ai",
    "langchain",
    "langchain-core",
    "langgraph",
    "openai-agents",
    "google-adk",
    "crewai",
    "mcp",
}
PYDANTIC_AI_RUN = """
import sys
from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from flowstate import FlowState
from flowstate.integrations.pydantic_ai import FlowStateCapability

replies = [[ToolCallPart("memory_record", {"delta": [{"op": "add", "key": "tea",
            "category": "preference", "summary": "Likes green tea", "content": "Green tea"}]})],
           [TextPart("Noted.")]]
model = FunctionModel(lambda messages, info: ModelResponse(parts=replies.pop(0)))
with FlowState.connect(sys.argv[1], namespace=sys.argv[2]) as fs:
    Agent(model, capabilities=[FlowStateCapability(fs)]).run_sync("I like green tea")
    print(fs.index().text)
    fs.forget_all()
"""


def test_the_pydantic_ai_extra_brings_no_other_framework_and_no_litellm(
    tmp_path: Path, neo4j_settings: Neo4jSettings
) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, f"{ROOT}[pydantic-ai]"], check=True, timeout=900)
    listed = subprocess.run(
        [python, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True
    )
    installed = {line.split("==")[0].lower() for line in listed.stdout.split()}
    assert "pydantic-ai-slim" in installed
    assert sorted(installed & NOT_WITH_PYDANTIC_AI) == []
    print(f"fresh [pydantic-ai] venv: {len(installed)} packages, {_size_mb(venv):.0f} MB")
    namespace = f"t_fresh_{uuid.uuid4().hex[:8]}"
    ran = subprocess.run(
        [python, "-c", PYDANTIC_AI_RUN, neo4j_settings.uri, namespace],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "r1.tea [preference] Likes green tea" in ran.stdout
