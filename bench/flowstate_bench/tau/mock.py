"""The mock domain: users with tasks. Small enough for fast unit tests of the harness."""

from __future__ import annotations

from typing import Any, Literal

from flowstate_bench.tau.env import Environment, ToolError


class MockEnv(Environment):
    domain = "mock"
    TOOLKIT = "MockTools"
    TOOLS = (
        "get_users",
        "create_task",
        "update_task_status",
        "transfer_to_human_agents",
    )
    WRITE_TOOLS = frozenset({"create_task", "update_task_status"})

    def get_users(self) -> list[dict[str, Any]]:
        """All users, with the ids of their tasks."""
        return list(self.db["users"].values())

    def create_task(self, user_id: str, title: str, description: str | None = None) -> dict:
        """Create a pending task for an existing user; the title must not be empty."""
        if user_id not in self.db["users"]:
            raise ToolError(f"user {user_id} not found")
        if not title.strip():
            raise ToolError("a task must have a title")
        task_id = f"task_{len(self.db['tasks']) + 1}"
        task = {
            "task_id": task_id,
            "title": title,
            "description": description,
            "status": "pending",
        }
        self.add("tasks", task_id, task)
        self.edit("users", user_id)["tasks"].append(task_id)
        return task

    def update_task_status(self, task_id: str, status: Literal["pending", "completed"]) -> dict:
        """Set a task's status to pending or completed."""
        if task_id not in self.db["tasks"]:
            raise ToolError(f"task {task_id} not found")
        task = self.edit("tasks", task_id)
        task["status"] = status
        return task

    def assert_task_status(self, task_id: str, expected_status: str) -> bool:
        task = self.db["tasks"].get(task_id)
        return task is not None and task["status"] == expected_status
