"""Run by test_engine_crash in a child process: starts a request, then dies mid-request.

The agent adds a state, calls a tool, then at the second tool call (mode `tool`) or when the
final commit starts (mode `commit`, after a final answer) the process kills itself with
os._exit, exactly as a crash would: no cleanup, no commit.
"""

from __future__ import annotations

import os
import sys

from flowstate import FlowState, ScriptedModel
from flowstate.settings import Neo4jSettings
from flowstate.store.ops import Ops


def main(uri: str, namespace: str, mode: str = "tool") -> None:
    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: 3 hotels"

    def die() -> str:
        """Simulates the process being killed."""
        os._exit(17)

    model = ScriptedModel.sequence(
        f"{namespace}-crash",
        [
            {
                "delta": [
                    {
                        "op": "add",
                        "key": "city",
                        "category": "constraint",
                        "summary": "Going to Porto",
                        "content": "Destination Porto",
                    }
                ],
                "action": {"type": "tool", "name": "lookup", "arguments": {"city": "Porto"}},
            },
            {
                "delta": [
                    {
                        "op": "add",
                        "key": "hotels",
                        "category": "environment",
                        "summary": "Porto has 3 hotels",
                        "content": "3 hotels",
                        "evidence": ["r1.o1"],
                    }
                ],
                "action": (
                    {"type": "tool", "name": "die", "arguments": {}}
                    if mode == "tool"
                    else {"type": "final", "answer": "3 hotels in Porto", "summary": "Porto"}
                ),
            },
        ],
    )
    if mode == "commit":
        Ops.commit = lambda self, bundle, **lease: os._exit(17)  # type: ignore[method-assign]
    fs = FlowState.connect(settings=Neo4jSettings(uri=uri), namespace=namespace)
    fs.agent(model.client(), tools=[lookup, die]).run("Plan Porto")
    sys.exit("the request should not have finished")


if __name__ == "__main__":
    main(*sys.argv[1:])
