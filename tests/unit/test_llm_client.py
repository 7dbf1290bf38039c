"""LiteLLMClient driven through the real litellm.completion path: by scripted models, and by
a stub provider of the tests' own registered with litellm (for replies a script cannot give).
Token figures are checked against a count made apart from flowstate.tokens, over what litellm
handed the provider (tests/litellm_boundary.py)."""

from __future__ import annotations

import asyncio
import doctest
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

import flowstate.llm.scripted
from flowstate.errors import ModelError, UsageError
from flowstate.llm import (
    PROVIDER,
    Completion,
    LiteLLMClient,
    ModelClient,
    ScriptedFailure,
    ScriptedModel,
)
from flowstate.llm._litellm import litellm
from flowstate.llm.client import check_model, compact_schema, response_format
from flowstate.models import AddOp, Category, FinalAnswer, StepOutput, ToolCall
from tests.litellm_boundary import (
    STUB,
    Received,
    StubProvider,
    prompt_tokens,
    recording,
    stub_provider,
    text_tokens,
)

ASK = [{"role": "user", "content": "Book me a hotel in Lisbon under 150 EUR."}]
FINAL = {"action": {"type": "final", "answer": "Booked."}}


@pytest.fixture
def spy() -> Iterator[list[Received]]:
    """Every call litellm routed to the scripted models' provider, as it was handed over."""
    with recording() as recorder:
        yield recorder.received


def test_sequence_through_litellm(spy: list[Received]) -> None:
    step = StepOutput(
        delta=[
            AddOp(
                op="add",
                key="hotel_budget",
                category=Category.CONSTRAINT,
                summary="under 150 EUR a night",
                content="User: under 150 EUR.",
            )
        ],
        action=ToolCall(type="tool", name="search_hotels", arguments={"city": "Lisbon"}),
    )
    model = ScriptedModel.sequence("seq", [step, FINAL, "```json\n" + json.dumps(FINAL) + "\n```"])
    client = model.client()
    assert model.model == f"{PROVIDER}/seq" == client.model

    first = client.complete(ASK, StepOutput)
    assert first.value == step
    assert first.error is None and first.finish_reason == "stop"
    second = client.complete(ASK, StepOutput)
    third = client.complete(ASK, StepOutput)
    assert (
        second.value
        == third.value
        == StepOutput(action=FinalAnswer(type="final", answer="Booked."))
    )
    assert model.remaining == 0

    assert [call.model for call in spy] == ["seq"] * 3  # litellm took the provider off
    assert [call.reply for call in model.calls] == [first.text, second.text, third.text]


def test_the_scripted_provider_bills_what_reached_it(spy: list[Received]) -> None:
    model = ScriptedModel.sequence("usage", [FINAL])
    done = model.client(structured=False).complete(ASK, StepOutput)
    [call] = spy
    assert done.usage.calls == 1
    # A scripted model is billed as a modern OpenAI model (o200k_base), like any model
    # tiktoken does not know.
    bill = prompt_tokens(call, "gpt-4o")
    assert done.usage.prompt_tokens == done.usage.estimated_prompt_tokens == bill
    assert bill > prompt_tokens(Received(call.model, ASK, {}), "gpt-4o")  # + the schema
    assert done.usage.completion_tokens == text_tokens(done.text, "gpt-4o") > 0


def test_policy_is_a_function_of_the_prompt(spy: list[Received]) -> None:
    def agent(messages: list[dict[str, Any]]) -> dict[str, Any] | StepOutput:
        last = messages[-1]
        if last["role"] == "tool":
            return StepOutput(action=FinalAnswer(type="final", answer=f"found {last['content']}"))
        return {"action": {"type": "tool", "name": "search", "arguments": {"q": last["content"]}}}

    client = ScriptedModel.policy("agent", agent).client()
    first = client.complete(ASK, StepOutput)
    assert first.value is not None
    assert first.value.action == ToolCall(
        type="tool", name="search", arguments={"q": ASK[0]["content"]}
    )
    observed = [*ASK, {"role": "tool", "content": "Hotel Azul", "tool_call_id": "1"}]
    second = client.complete(observed, StepOutput)
    assert second.value is not None
    assert second.value.action == FinalAnswer(type="final", answer="found Hotel Azul")
    assert len(spy) == 2
    assert second.usage.prompt_tokens > first.usage.prompt_tokens


def test_unparseable_reply_is_returned_not_raised() -> None:
    client = ScriptedModel.sequence("chatty", ["I booked it for you!"]).client()
    done = client.complete(ASK, StepOutput)
    assert done.value is None and not done.ok
    assert done.error == "no JSON object found: reply with one JSON object"
    assert done.text == "I booked it for you!"
    assert done.usage.completion_tokens == text_tokens("I booked it for you!", "gpt-4o")


def test_exhausted_script_is_a_clear_error_and_not_retried(spy: list[Received]) -> None:
    client = ScriptedModel.sequence("short", [FINAL]).client(retry_backoff_s=0)
    client.complete(ASK, StepOutput)
    with pytest.raises(ModelError) as info:
        client.complete(ASK, StepOutput)
    assert str(info.value) == (
        "model 'flowstate-scripted/short' refused the call: BadRequestError: scripted model "
        "'short' is exhausted: all 1 outputs were used and call 2 has nothing to return"
    )
    assert len(spy) == 2


def test_unknown_script_name() -> None:
    ScriptedModel.sequence("known", [FINAL])
    with pytest.raises(ModelError, match=r"no scripted model named 'ghost' \(registered: "):
        LiteLLMClient("flowstate-scripted/ghost", retry_backoff_s=0).complete(ASK, StepOutput)


def test_many_named_scripts_and_idempotent_registration() -> None:
    a = ScriptedModel.sequence("alpha", [{"action": {"type": "final", "answer": "a"}}])
    b = ScriptedModel.policy("beta", lambda _: {"action": {"type": "final", "answer": "b"}})
    with pytest.raises(UsageError, match="a scripted model named 'alpha' is already registered"):
        ScriptedModel.sequence("alpha", [{"action": {"type": "final", "answer": "a2"}}])
    assert flowstate.llm.scripted.register(a) is a  # the same script again: nothing changes
    flowstate.llm.scripted.unregister("alpha")
    again = ScriptedModel.sequence("alpha", [{"action": {"type": "final", "answer": "a2"}}])
    flowstate.llm.scripted.install_provider()
    entries = [e for e in litellm.custom_provider_map if e["provider"] == PROVIDER]
    assert len(entries) == 1

    def answer(model: ScriptedModel) -> str:
        value = model.client().complete(ASK, StepOutput).value
        assert value is not None and isinstance(value.action, FinalAnswer)
        return value.action.answer

    assert answer(b) == "b"
    assert answer(again) == "a2"  # the name was freed, then taken by the newer script
    assert a.calls == []
    assert answer(b) == "b"


def test_a_scripted_model_used_as_a_context_manager_frees_its_name() -> None:
    with ScriptedModel.sequence("scoped", [FINAL]) as model:
        assert "scoped" in flowstate.llm.scripted.registered()
        assert model.client().complete(ASK, StepOutput).ok
    assert "scoped" not in flowstate.llm.scripted.registered()
    with ScriptedModel.sequence("scoped", [FINAL]) as other:
        assert other is not model
        flowstate.llm.scripted.unregister("scoped", model)  # not the one served: kept
        assert "scoped" in flowstate.llm.scripted.registered()


def test_provider_is_reinstalled_if_the_map_was_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(litellm, "custom_provider_map", [])
    model = ScriptedModel.sequence("fresh", [FINAL])
    assert [e["provider"] for e in litellm.custom_provider_map] == [PROVIDER]
    assert model.client().complete(ASK, StepOutput).ok


def test_bad_outputs_are_refused_up_front() -> None:
    with pytest.raises(TypeError, match="must be str, dict or a pydantic model"):
        ScriptedModel.sequence("bad", [FINAL, 42])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="without '/'"):
        ScriptedModel.sequence("a/b", [FINAL])


def test_policy_that_raises_is_reported_not_retried(spy: list[Received]) -> None:
    def broken(messages: list[dict[str, Any]]) -> str:
        raise ValueError("boom")

    client = ScriptedModel.policy("broken", broken).client(retry_backoff_s=0)
    with pytest.raises(ModelError) as info:
        client.complete(ASK, StepOutput)
    assert str(info.value) == (
        "model 'flowstate-scripted/broken' refused the call: BadRequestError: "
        "policy of scripted model 'broken' raised ValueError('boom')"
    )
    assert len(spy) == 1


# --- retries --------------------------------------------------------------------------------


def test_transient_failures_are_retried(spy: list[Received]) -> None:
    failures = [ScriptedFailure(429, "slow down"), ScriptedFailure(503, "overloaded")]
    model = ScriptedModel.sequence("flaky", [*failures, FINAL])
    done = model.client(retries=2, retry_backoff_s=0).complete(ASK, StepOutput)
    assert done.ok
    assert len(spy) == 3
    assert [c.reply for c in model.calls][:2] == [None, None]


def test_retries_are_bounded() -> None:
    outputs = [ScriptedFailure(503, "overloaded")] * 3 + [FINAL]
    model = ScriptedModel.sequence("down", outputs)
    with pytest.raises(ModelError) as info:
        model.client(retries=2, retry_backoff_s=0).complete(ASK, StepOutput)
    assert str(info.value) == (
        "model 'flowstate-scripted/down' failed after 3 attempts: "
        "ServiceUnavailableError: overloaded"
    )
    assert model.remaining == 1  # the good output was never reached


@pytest.mark.parametrize(
    ("status", "kind"), [(401, "AuthenticationError"), (400, "BadRequestError")]
)
def test_permanent_failures_are_not_retried(status: int, kind: str) -> None:
    model = ScriptedModel.sequence("denied", [ScriptedFailure(status, "no"), FINAL])
    with pytest.raises(ModelError) as info:
        model.client(retry_backoff_s=0).complete(ASK, StepOutput)
    assert str(info.value) == f"model 'flowstate-scripted/denied' refused the call: {kind}: no"
    assert model.remaining == 1


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "OpenAIException - Missing credentials. Please set the OPENAI_API_KEY variable"),
        (503, "Incorrect API key provided"),
        (502, "The model `gpt-9` does not exist"),
        (403, "forbidden"),
        (404, "no such deployment"),
    ],
)
def test_configuration_errors_are_not_retried_whatever_their_class(
    status: int, message: str
) -> None:
    """A missing key comes back from litellm as an InternalServerError: retrying it only made
    the user wait for the same error three times."""
    model = ScriptedModel.sequence("unconfigured", [ScriptedFailure(status, message), FINAL])
    with pytest.raises(ModelError, match="refused the call") as info:
        model.client(retries=2, retry_backoff_s=0).complete(ASK, StepOutput)
    assert message.split(" - ")[-1] in str(info.value)
    assert model.remaining == 1  # asked once


def test_a_model_name_litellm_cannot_place_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    check_model("gpt-4o-mini")
    check_model("anthropic/claude-3-5-haiku-latest")
    check_model("flowstate-scripted/anything")  # resolves; whether it is registered is later
    with pytest.raises(UsageError, match=r"unknown model 'gtp-4o': litellm cannot tell"):
        check_model("gtp-4o")


def test_backoff_grows_and_is_capped() -> None:
    client = LiteLLMClient("gpt-4o", retry_backoff_s=0.5)
    assert [client._delay(i) for i in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


# --- structured output vs JSON in text -------------------------------------------------------


def test_without_schema_support_the_schema_goes_into_the_system_message() -> None:
    model = ScriptedModel.sequence("text", [FINAL, FINAL])
    client = model.client(structured=None)
    assert client.structured is False  # litellm does not claim schema support for it
    client.complete(ASK, StepOutput)
    client.complete([{"role": "system", "content": "You are FlowState."}, *ASK], StepOutput)
    first, second = model.calls
    assert first.response_format is None
    assert first.messages[0]["role"] == "system"
    assert (
        '"$defs"' in first.messages[0]["content"]
        and '"FinalAnswer"' in first.messages[0]["content"]
    )
    assert first.messages[1:] == ASK
    assert second.messages[0]["content"].startswith(
        "You are FlowState.\n\nReply with exactly one JSON"
    )
    assert len(second.messages) == 2  # the existing system message was extended, not duplicated


def test_structured_output_sends_the_json_schema() -> None:
    model = ScriptedModel.sequence("structured", [FINAL])
    model.client(structured=True).complete(ASK, StepOutput)
    (call,) = model.calls
    assert call.messages == ASK
    assert call.response_format == {
        "type": "json_schema",
        "json_schema": {
            "name": "StepOutput",
            "schema": compact_schema(StepOutput),
            "strict": False,
        },
    }


def test_the_sent_schema_drops_titles_and_discriminators_only() -> None:
    full, sent = StepOutput.model_json_schema(), compact_schema(StepOutput)
    text = json.dumps(sent)
    assert '"title"' not in text and "discriminator" not in text
    assert sent["$defs"].keys() == full["$defs"].keys()
    assert sent["$defs"]["AddOp"]["required"] == full["$defs"]["AddOp"]["required"]
    assert len(text) < 0.85 * len(json.dumps(full))


def test_schema_support_comes_from_litellm() -> None:
    assert LiteLLMClient("gpt-4o-mini").structured is True
    assert LiteLLMClient("gpt-3.5-turbo").structured is False
    assert LiteLLMClient("no-such-provider/whatever").structured is False


# Through a stub provider: "gpt-4-stub" is billed with cl100k_base, tiktoken's encoding for
# gpt-4 models, and litellm knows no model info for it that would refuse response_format.
GPT4 = f"{STUB}/gpt-4-stub"


def test_usage_is_estimated_when_the_provider_gives_none() -> None:
    text = json.dumps(FINAL)
    with stub_provider(StubProvider(text)) as stub:
        done = LiteLLMClient(GPT4, structured=True).complete(ASK, StepOutput)
    assert done.ok
    [call] = stub.received
    assert call.response_format == response_format(StepOutput)
    # The whole bill: the messages and the schema sent as response_format.
    bill = prompt_tokens(call, "gpt-4")
    assert bill > prompt_tokens(Received(call.model, ASK, {}), "gpt-4")
    assert done.usage.prompt_tokens == done.usage.estimated_prompt_tokens == bill
    assert done.usage.completion_tokens == text_tokens(text, "gpt-4")
    assert done.sent is not None and done.sent.response_format == call.response_format


def test_tool_definitions_passed_as_litellm_arguments_are_counted() -> None:
    city = {"type": "object", "properties": {"city": {"type": "string"}}}
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": city}}]
    with stub_provider(StubProvider(json.dumps(FINAL))) as stub:
        done = LiteLLMClient(GPT4, structured=True, tools=tools).complete(ASK, StepOutput)
    [call] = stub.received
    assert call.tools == tools  # litellm handed them to the provider
    without = Received(call.model, call.messages, {"response_format": call.response_format})
    assert prompt_tokens(call, "gpt-4") > prompt_tokens(without, "gpt-4")
    assert done.usage.prompt_tokens == done.usage.estimated_prompt_tokens
    assert done.usage.prompt_tokens == prompt_tokens(call, "gpt-4")


def test_provider_usage_is_used_when_given() -> None:
    with stub_provider(StubProvider("{}", usage=(1234, 56))) as stub:
        done = LiteLLMClient(f"{STUB}/gpt-4o-stub", structured=True).complete(ASK, StepOutput)
    assert (done.usage.prompt_tokens, done.usage.completion_tokens, done.usage.calls) == (
        1234,
        56,
        1,
    )
    # The estimate is kept beside the provider's figure.
    [call] = stub.received
    assert done.usage.estimated_prompt_tokens == prompt_tokens(call, "gpt-4o")


def test_truncated_reply_says_so() -> None:
    cut = '{"action": {"type": "final", "answer": "The hotel is'
    with stub_provider(StubProvider(cut, finish_reason="length")):
        done = LiteLLMClient(f"{STUB}/gpt-4o-stub", structured=True).complete(ASK, StepOutput)
    assert done.error == (
        "not valid JSON: the object starting at char 0 is never closed "
        "(the reply was cut off at the output token limit; be shorter)"
    )
    assert done.finish_reason == "length" and done.text == cut


# --- async ----------------------------------------------------------------------------------


def test_async_sequence_and_policy(spy: list[Received]) -> None:
    seq = ScriptedModel.sequence("aseq", [ScriptedFailure(429, "later"), FINAL]).client(
        retry_backoff_s=0
    )
    pol = ScriptedModel.policy(
        "apol", lambda m: {"action": {"type": "final", "answer": str(len(m))}}
    )

    async def run() -> tuple[Completion[StepOutput], Completion[StepOutput]]:
        return await seq.acomplete(ASK, StepOutput), await pol.client(structured=False).acomplete(
            ASK, StepOutput
        )

    first, second = asyncio.run(run())
    assert first.value == StepOutput(action=FinalAnswer(type="final", answer="Booked."))
    assert second.value == StepOutput(action=FinalAnswer(type="final", answer="2"))  # + system
    assert first.usage.prompt_tokens > 0 and second.usage.completion_tokens > 0
    assert len(spy) == 3  # one retry on the async path too


def test_async_exhausted() -> None:
    client = ScriptedModel.sequence("aempty", []).client()
    with pytest.raises(ModelError, match="'aempty' is exhausted: all 0 outputs were used"):
        asyncio.run(client.acomplete(ASK, StepOutput))


# --- shape of the package -------------------------------------------------------------------


def test_client_satisfies_the_protocol() -> None:
    assert isinstance(LiteLLMClient("gpt-4o"), ModelClient)


def test_importing_flowstate_does_not_import_litellm() -> None:
    code = (
        "import sys, flowstate, flowstate.llm, flowstate.tokens\n"
        "assert 'litellm' not in sys.modules\n"
        "assert 'LITELLM_LOCAL_MODEL_COST_MAP' not in __import__('os').environ\n"
    )
    env = {"PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_scripted_doctests() -> None:
    result = doctest.testmod(flowstate.llm.scripted)
    assert result.attempted > 0 and result.failed == 0


def test_scripted_clients_send_the_schema_as_response_format_by_default() -> None:
    model = ScriptedModel.sequence("structured-default", [FINAL])
    model.client().complete(ASK, StepOutput)
    (call,) = model.calls
    assert call.messages == ASK  # nothing added to the prompt
    assert call.response_format is not None
    assert call.response_format["json_schema"]["name"] == "StepOutput"
    assert "delta" in call.response_format["json_schema"]["schema"]["properties"]


def test_a_missing_api_key_is_named_before_any_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(UsageError, match=r"needs ANTHROPIC_API_KEY in the environment"):
        check_model("anthropic/claude-3-5-haiku-latest")
    monkeypatch.delenv("OLLAMA_API_BASE", raising=False)
    check_model("ollama/llama3")  # a base URL with a default is not a missing credential
