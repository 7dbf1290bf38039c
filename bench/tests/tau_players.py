"""A scripted policy that plays both sides of a tau-bench conversation through litellm: the
unit tests run it on the baselines, the Neo4j tests on the FlowState engine.

Imported by its name: pytest puts this folder on sys.path for its conftest.py."""

from __future__ import annotations

import re

from flowstate_bench.tau.strategies import SUMMARY_SYSTEM, TOOL_RESULT


def play_user_and_agent(messages: list[dict[str, str]]) -> dict[str, object]:
    """A stand-in for a real model, as both the simulated user and the agent."""
    system, text = messages[0]["content"], "\n".join(m["content"] for m in messages)
    if "User Simulation Guidelines" in system:
        said = sum(m["role"] == "assistant" for m in messages)
        return {"message": "Please mark task_1 as completed." if not said else "Thanks ###STOP###"}
    if SUMMARY_SYSTEM in system:
        return {"summary": "task_1 completed"}
    if "# User request (r" in text:  # the FlowState engine's prompt
        if re.search(r"\.o\d+ update_task_status\(", text):  # its observation, not the tool list
            return {"action": {"type": "final", "answer": "Done: task_1 is completed."}}
        arguments = {"task_id": "task_1", "status": "completed"}
        return {"action": {"type": "tool", "name": "update_task_status", "arguments": arguments}}
    if f"{TOOL_RESULT} update_task_status [ok]" in text:
        return {"type": "final", "answer": "Done: task_1 is completed."}
    arguments = {"task_id": "task_1", "status": "completed"}
    return {"type": "tool", "name": "update_task_status", "arguments": arguments}
