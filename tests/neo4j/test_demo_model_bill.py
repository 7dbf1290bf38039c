"""`flowstate demo`: with `-m <model>` both agents call that model, and each side's bill counts
prompt and completion with one tokenizer, whatever usage the provider reports; a run over a
namespace that holds requests measures in a fresh one and leaves it as it was."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator

import pytest
from click.testing import Result

from flowstate.api import FlowState
from flowstate.store import Repository, Store
from tests.litellm_boundary import StubProvider, stub_provider, text_tokens

pytestmark = pytest.mark.neo4j

REPLY = "SUMMARY Probe of the demo\nFINAL Sure, here is the plan."


@pytest.fixture
def demo_namespace(store: Store, namespace: str) -> Iterator[str]:
    yield namespace
    Repository(store, namespace).forget_namespace(force=True)


def test_a_model_bill_counts_completions_with_the_tokenizer_it_counts_prompts_with(
    cli: Callable[..., Result], demo_namespace: str
) -> None:
    # A provider that reports a usage of its own (7 prompt, 1 completion tokens a call),
    # unlike what the tokenizer counts for what it was sent and what it wrote.
    with stub_provider(StubProvider(REPLY, usage=(7, 1))) as stub:
        out = cli("demo", "-N", demo_namespace, "-m", "flowstate-test-stub/gpt-4o", "--json")
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["namespace"] == demo_namespace
    ours, plain = report["totals"]["flowstate"], report["totals"]["plain"]
    # Both agents went to the model the user named.
    assert ours["calls"] + plain["calls"] == len(stub.received)
    assert ours["prompt_tokens"] > 7 * ours["calls"]  # prompts: counted, not the provider's 7
    written = text_tokens(REPLY, "gpt-4o")
    assert ours["completion_tokens"] == written * ours["calls"]
    assert plain["completion_tokens"] == written * plain["calls"]


def test_a_second_run_in_a_namespace_of_the_longest_name_uses_a_fresh_one(
    cli: Callable[..., Result], store: Store
) -> None:
    name = f"d{uuid.uuid4().hex}".ljust(128, "x")  # the longest valid name
    given = FlowState(store, name)
    session = given.begin("Keep me")
    session.commit("Kept", "Kept")
    used = ""
    try:
        out = cli("demo", "-N", name, "--json")
        assert out.exit_code == 0, out.output
        used = json.loads(out.output)["namespace"]
        assert used != name and used.endswith("-2") and len(used) == 128
        assert [r.summary for r in given.history()] == ["Kept"]  # left as it was
    finally:
        for namespace in {name, used} - {""}:
            Repository(store, namespace).forget_namespace(force=True)
