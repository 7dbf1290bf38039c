"""Run by test_engine_writers in a child process: a writer that runs a request whose tool
waits for the test to say go (a file appears), then finishes and commits.

It prints `started <writer id>` once its request runs, so the test knows the request is held.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from flowstate import AgentConfig, FlowState, ScriptedModel
from flowstate.settings import Neo4jSettings


def main(uri: str, namespace: str, go_file: str) -> None:
    fs = FlowState.connect(settings=Neo4jSettings(uri=uri), namespace=namespace)

    def wait_for_go() -> str:
        """Blocks until the test lets the request go on."""
        print(f"started {agent.writer}", flush=True)
        deadline = time.monotonic() + 120
        while not Path(go_file).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        return "go"

    model = ScriptedModel.sequence(
        f"{namespace}-writer",
        [
            {
                "delta": [
                    {
                        "op": "add",
                        "key": "held",
                        "category": "environment",
                        "summary": "written while holding the namespace",
                        "content": "held",
                    }
                ],
                "action": {"type": "tool", "name": "wait_for_go", "arguments": {}},
            },
            {"action": {"type": "final", "answer": "child done"}},
        ],
    )
    # A short hold: the background renewal must keep it while the tool waits.
    agent = fs.agent(model.client(), tools=[wait_for_go], config=AgentConfig(hold_seconds=6))
    result = agent.run("hold the namespace")
    print(f"committed {result.request_id}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
