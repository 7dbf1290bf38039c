"""Mem0's and Graphiti's real write paths, pointed at the scripted endpoint.

Each system is built with its own OpenAI clients (LLM, embedder, and Graphiti's reranker) with
`base_url` set to the endpoint, so its prompts, schemas and embedding inputs are sent exactly as
they would be to OpenAI. One write is one conversation turn (the request and the answer):
`Memory.add(messages, user_id=...)` for Mem0, `Graphiti.add_episode(...)` for Graphiti.

Mem0 keeps its vectors in Qdrant's in-process local mode and its history in SQLite, both in a
temporary folder; its telemetry is off. Graphiti writes into the given Neo4j under a group id
of its own (Graphiti's isolation within one database), and `close` deletes that group's nodes
and nothing else. Graphiti's indexes are created with IF NOT EXISTS and left in place, as any
Graphiti install leaves them.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from flowstate.settings import Neo4jSettings
from flowstate_bench.upkeep.demo_writes import RequestWrites
from flowstate_bench.upkeep.endpoint import BILLED_AS, EMBEDDING_DIMENSIONS, Endpoint

API_KEY = "scripted"  # the endpoint checks none; the clients insist on one
EMBEDDING_MODEL = "text-embedding-3-small"
SYSTEMS = ("mem0", "graphiti")


class Mem0Writer:
    """A Mem0 `Memory` whose every model and embedding call goes to the endpoint."""

    name = "mem0"

    def __init__(self, endpoint: Endpoint, folder: str) -> None:
        # Mem0 reads these when first imported: no telemetry, and its files in our folder.
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ["MEM0_DIR"] = folder
        import mem0.memory.main as mem0_main
        import mem0.memory.telemetry as mem0_telemetry
        from mem0 import Memory

        # And off even where Mem0 was imported before: with telemetry on it reports events and
        # fetches its notices from the network.
        mem0_telemetry.MEM0_TELEMETRY = mem0_main.MEM0_TELEMETRY = False
        config: dict[str, Any] = {
            "llm": {
                "provider": "openai",
                "config": {
                    "model": BILLED_AS,
                    "api_key": API_KEY,
                    "openai_base_url": endpoint.base_url,
                },
            },
            "embedder": {
                "provider": "openai",
                "config": {
                    "model": EMBEDDING_MODEL,
                    "api_key": API_KEY,
                    "openai_base_url": endpoint.base_url,
                    "embedding_dims": EMBEDDING_DIMENSIONS,
                },
            },
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "collection_name": "upkeep",
                    "path": os.path.join(folder, "qdrant"),
                    "embedding_model_dims": EMBEDDING_DIMENSIONS,
                    "on_disk": False,
                },
            },
            "history_db_path": os.path.join(folder, "history.db"),
        }
        self.memory = Memory.from_config(config)
        self.user = f"upkeep-{uuid.uuid4().hex[:12]}"

    def write(self, request: RequestWrites) -> Any:
        return self.memory.add(request.turn, user_id=self.user)

    def close(self) -> None:
        close = getattr(self.memory, "close", None)
        if close is not None:
            close()


class GraphitiWriter:
    """A Graphiti on the given Neo4j, in a group of its own; its clients go to the endpoint."""

    name = "graphiti"

    def __init__(self, endpoint: Endpoint, neo4j: Neo4jSettings) -> None:
        os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"  # read when Graphiti is imported
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.openai_reranker_client import (
            OpenAIRerankerClient,
        )
        from graphiti_core.driver.neo4j_driver import Neo4jDriver
        from graphiti_core.embedder.openai import (
            OpenAIEmbedder,
            OpenAIEmbedderConfig,
        )
        from graphiti_core.llm_client import LLMConfig, OpenAIClient

        llm = LLMConfig(
            api_key=API_KEY, base_url=endpoint.base_url, model=BILLED_AS, small_model=BILLED_AS
        )
        embedder = OpenAIEmbedderConfig(
            api_key=API_KEY,
            base_url=endpoint.base_url,
            embedding_model=EMBEDDING_MODEL,
            embedding_dim=EMBEDDING_DIMENSIONS,
        )
        self.loop = asyncio.new_event_loop()
        auth = neo4j.auth() or (neo4j.user, "")
        driver = Neo4jDriver(neo4j.uri, auth[0], auth[1], database=neo4j.database)
        self.graphiti = Graphiti(
            graph_driver=driver,
            llm_client=OpenAIClient(config=llm),
            embedder=OpenAIEmbedder(config=embedder),
            cross_encoder=OpenAIRerankerClient(config=llm),
        )
        # Graphiti's group ids allow letters, digits, dashes and underscores.
        self.group = f"flowstate_upkeep_{uuid.uuid4().hex[:12]}"
        self.loop.run_until_complete(self.graphiti.build_indices_and_constraints())

    def write(self, request: RequestWrites) -> Any:
        body = f"user: {request.text}\nassistant: {request.answer}"
        return self.loop.run_until_complete(
            self.graphiti.add_episode(
                name=request.request_id,
                episode_body=body,
                source_description="the demo's conversation",
                reference_time=datetime.now(UTC),
                group_id=self.group,
            )
        )

    def close(self) -> None:
        from graphiti_core.utils.maintenance.graph_data_operations import (
            clear_data,
        )

        try:
            # Only this group's nodes: clear_data without group ids would empty the database.
            assert self.group.startswith("flowstate_upkeep_")
            self.loop.run_until_complete(clear_data(self.graphiti.driver, group_ids=[self.group]))
        finally:
            self.loop.run_until_complete(self.graphiti.close())
            self.loop.close()


@contextmanager
def writer(
    system: str, endpoint: Endpoint, neo4j: Neo4jSettings
) -> Iterator[Mem0Writer | GraphitiWriter]:
    """The named system, closed (and its data removed) when the block ends."""
    with tempfile.TemporaryDirectory(prefix="flowstate-upkeep-") as folder:
        made: Mem0Writer | GraphitiWriter
        if system == "mem0":
            made = Mem0Writer(endpoint, folder)
        elif system == "graphiti":
            made = GraphitiWriter(endpoint, neo4j)
        else:
            raise ValueError(f"unknown memory system {system!r}: one of {', '.join(SYSTEMS)}")
        try:
            yield made
        finally:
            made.close()
