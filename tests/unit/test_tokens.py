"""Token counting (offline, both encodings) and budgets."""

from __future__ import annotations

import doctest
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import flowstate.tokens
from flowstate.errors import FlowStateRuntimeError
from flowstate.tokens import count_messages, count_request, count_tokens, encoding_name
from tests.litellm_boundary import Received, litellm_encoding, prompt_tokens

CHINESE = "你好，世界！今天天气很好。"


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (None, "o200k_base"),
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("azure/gpt-4.1-mini", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("gpt-oss-120b", "o200k_base"),  # o200k_harmony is not shipped; its base vocabulary is
        ("gpt-4", "cl100k_base"),
        ("openrouter/openai/gpt-3.5-turbo", "cl100k_base"),
        ("text-davinci-003", "cl100k_base"),  # legacy p50k falls back
        ("anthropic/claude-3-5-sonnet-20241022", "o200k_base"),  # unknown: modern default
        ("ollama/llama3", "o200k_base"),
        ("flowstate-scripted/anything", "o200k_base"),
    ],
)
def test_encoding_for_litellm_model_names(model: str | None, expected: str) -> None:
    assert encoding_name(model) == expected


def test_counts_with_both_encodings_offline() -> None:
    assert count_tokens("hello world") == 2
    assert count_tokens("The quick brown fox jumps over the lazy dog.", "gpt-4") == 10
    # the two vocabularies really differ: o200k packs CJK text much tighter
    assert count_tokens(CHINESE, "gpt-4o") == 9
    assert count_tokens(CHINESE, "gpt-4") == 16
    assert count_tokens("") == 0


def test_special_token_text_counts_as_plain_text() -> None:
    assert count_tokens("<|endoftext|>") == 7


def test_encoders_are_cached() -> None:
    assert flowstate.tokens.encoder("gpt-4o") is flowstate.tokens.encoder("claude-3-haiku")
    assert flowstate.tokens.encoder("gpt-4") is not flowstate.tokens.encoder("gpt-4o")


def test_count_messages_adds_per_message_overhead() -> None:
    one = [{"role": "user", "content": "hello world"}]
    # 3 reply priming + 3 per message + "user" (1) + "hello world" (2)
    assert count_messages(one) == 9
    assert count_messages([{**one[0], "name": "bob"}]) == 11  # "bob" (1) + 1 for a name
    two = [{"role": "system", "content": "be brief"}, *one]
    assert count_messages(two) == 9 + 3 + 1 + count_tokens("be brief")


def test_count_messages_reads_text_parts_only() -> None:
    parts = [
        {"type": "text", "text": "hello world"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    assert count_messages([{"role": "user", "content": parts}]) == 9


def test_cache_dir_is_set_lazily_not_at_import() -> None:
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    code = (
        "import os, flowstate.tokens as t\n"
        "assert 'TIKTOKEN_CACHE_DIR' not in os.environ, 'set at import'\n"
        "assert t.count_tokens('hello world') == 2\n"
        "print(os.environ['TIKTOKEN_CACHE_DIR'])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    # The encodings shipped in the wheel (flowstate/_tiktoken), not litellm's copies.
    assert out.stdout.strip().endswith(os.path.join("flowstate", "_tiktoken"))


def test_unloadable_encoding_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(name: str) -> None:
        raise ValueError(f"no file for {name}")

    monkeypatch.setattr(flowstate.tokens.tiktoken, "get_encoding", broken)
    flowstate.tokens._encoding.cache_clear()
    try:
        with pytest.raises(FlowStateRuntimeError, match="cannot load tiktoken encoding 'cl100k"):
            count_tokens("hi", "gpt-4o")  # o200k fails, then the cl100k fallback fails too
    finally:
        monkeypatch.undo()
        flowstate.tokens._encoding.cache_clear()
    assert count_tokens("hello world") == 2


# Text of every kind: the special-token strings, CJK, emoji, JSON, long runs of one character.
texts = st.text(max_size=300) | st.sampled_from(
    ["<|endoftext|>", CHINESE, "🙂" * 40, '{"a": [1, 2]}', "." * 3000, " \n\t ", ""]
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["system", "user", "assistant", "tool"]), "content": texts},
        optional={"name": st.sampled_from(["ana", "lookup"])},
    ),
    max_size=4,
)


@pytest.mark.parametrize(
    ("model", "encoding"), [("gpt-4o", "o200k_base"), ("gpt-4", "cl100k_base")]
)
@settings(max_examples=150, deadline=None, derandomize=True)
@given(text=texts, chat=messages)
def test_counts_agree_with_a_count_made_apart(
    model: str, encoding: str, text: str, chat: list[dict[str, str]]
) -> None:
    """The shipped encodings and the chat accounting against litellm's: its token_counter,
    over an encoding built from the BPE files litellm ships (tests/litellm_boundary.py)."""
    assert count_tokens(text, model) == len(litellm_encoding(encoding).encode_ordinary(text))
    assert count_messages(chat, model) == prompt_tokens(Received(model, chat, {}), model)
    schema = {"type": "json_object", "note": text}
    tools = [{"type": "function", "function": {"name": "f", "description": text}}]
    sent = Received(model, chat, {"response_format": schema, "tools": tools})
    assert count_request(chat, schema, tools, model) == prompt_tokens(sent, model)


def test_module_doctests() -> None:
    result = doctest.testmod(flowstate.tokens)
    assert result.attempted > 0 and result.failed == 0
