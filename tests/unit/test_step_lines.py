"""The keyword-line step format: what a model writes is read as the JSON step object would
be, every mistake is named by its line, and hostile replies are bounded like JSON ones."""

from __future__ import annotations

import doctest
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import flowstate.llm.step_lines
from flowstate.llm.parsing import MAX_REPLY_CHARS, MAX_REPLY_DEPTH
from flowstate.llm.step_lines import (
    parse_lines,
    parse_step_reply,
    render_lines,
)
from flowstate.models import StepOutput
from flowstate.models.vocab import Category, RelationType


def test_a_full_step_reads_as_its_json_twin() -> None:
    text = (
        "Sure, here is my step:\n```\n"
        "ACCESS r2.budget, r4\n"
        'ADD {"key": "hotel", "category": "decision",\n'
        '     "summary": "Casa Azul", "content": "120 EUR a night",\n'
        '     "relations": [{"type": "DEPENDS_ON", "target": "r2.budget"}],\n'
        '     "evidence": ["r5.o1"]}\n'
        'UPDATE {"key": "plan", "summary": "Plan v2"}\n'
        "REMOVE draft\n"
        'TOOL book_hotel {"hotel": "H7", "nights": 3} CITES r2.budget hotel\n'
        "```"
    )
    twin = StepOutput.model_validate(
        {
            "access": ["r2.budget", "r4"],
            "delta": [
                {"op": "add", "key": "hotel", "category": "decision", "summary": "Casa Azul",
                 "content": "120 EUR a night", "evidence": ["r5.o1"],
                 "relations": [{"type": "DEPENDS_ON", "target": "r2.budget"}]},
                {"op": "update", "key": "plan", "summary": "Plan v2"},
                {"op": "remove", "key": "draft"},
            ],
            "action": {"type": "tool", "name": "book_hotel", "arguments": {"hotel": "H7",
                       "nights": 3}, "cites": ["r2.budget", "hotel"]},
        }
    )  # fmt: skip
    assert parse_lines(text).value == twin


def test_final_takes_the_rest_of_the_reply_and_summary_goes_with_it() -> None:
    out = parse_lines("summary: Hotel booked\nfinal: Booked.\nTwo lines.\n```\n").value
    assert out is not None and out.action is not None
    assert (out.action.answer, out.action.summary) == ("Booked.\nTwo lines.", "Hotel booked")  # type: ignore[union-attr]
    # A keyword word in mixed case is text of the answer.
    answer = parse_lines("FINAL Trip:\nSummary: 3 nights\nAdd a day").value
    assert answer is not None and answer.action.answer == "Trip:\nSummary: 3 nights\nAdd a day"  # type: ignore[union-attr]


def test_keyword_lines_after_final_are_items_of_the_step() -> None:
    text = (
        'FINAL Noted.\nADD name preference "User is Ana" "Ana"\nSUMMARY Name noted\n'
        "REMOVE draft\nACCESS r2.budget"
    )
    out = parse_lines(text).value
    assert out is not None and out.action is not None
    assert (out.action.answer, out.action.summary) == ("Noted.", "Name noted")  # type: ignore[union-attr]
    assert [(op.op, op.key) for op in out.delta] == [("add", "name"), ("remove", "draft")]
    assert out.access == ["r2.budget"]
    # The same lines before FINAL say the same step.
    before = parse_lines(
        'ADD name preference "User is Ana" "Ana"\nSUMMARY Name noted\nREMOVE draft\n'
        "ACCESS r2.budget\nFINAL Noted."
    ).value
    assert before == out


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("FINAL see below\nTOOL x {}", "line 2 (TOOL): one action per step"),
        ("FINAL a\nb\nFINAL c", "line 3 (FINAL): one action per step"),
        ("SUMMARY s\nFINAL a\nSUMMARY: total 749 EUR", "line 3 (SUMMARY): a second SUMMARY "
         "(the first is on line 1)"),
        ('ADD a decision "s" "c"\nFINAL x\nADD b mood "s" "c"', "line 3 (ADD): category"),
        ("```\nFINAL x\n```\nThanks!", "line 4: expected a line starting with one of ADD, "
         "UPDATE, REMOVE, ACCESS, TOOL, SUMMARY, FINAL after the step's closing fence, got "
         "'Thanks!'"),
    ],
)  # fmt: skip
def test_what_follows_final_is_never_lost(text: str, error: str) -> None:
    parsed = parse_lines(text)
    assert parsed.error is not None and parsed.error.startswith(error), parsed.error


@pytest.mark.parametrize(
    "answer",
    [
        "To drop it write:\r\n```\r\nREMOVE real\r\n```",  # CRLF fences
        "To drop it:\n``` text\nREMOVE real\n```",  # an info string with a space
        'x\n```\u00a0\nUPDATE real "Hacked" "c"\n```',  # a no-break space after it
        "x\n~~~\nREMOVE real\n~~~",  # tildes
        "x\n````\n```python\nREMOVE real\n```\n````",  # a fence inside a longer one
        "Steps:\nREMOVE the lid\nADD 2 cups of flour",  # capitals that do not read as items
        'Script:\n```\nADD a decision "s" "c"\nTOOL x {}\n```',  # inside its code block
        "Summary:\nSUMMARY",  # an empty SUMMARY is no line of the step
    ],
)
def test_text_that_does_not_read_as_an_item_stays_in_the_answer(answer: str) -> None:
    out = parse_lines("FINAL " + answer).value
    assert out is not None and out.action.answer == answer and not out.delta  # type: ignore[union-attr]
    wrapped = parse_lines("```\nFINAL " + answer + "\n```").value
    assert wrapped is not None and wrapped.action.answer == answer  # type: ignore[union-attr]


def test_an_answer_keeps_its_own_code_block() -> None:
    answer = "Here is the script:\n```python\nprint(1)\n```"
    plain = parse_lines("FINAL " + answer).value
    assert plain is not None and plain.action.answer == answer  # type: ignore[union-attr]
    wrapped = parse_lines("```\nFINAL " + answer + "\n```").value
    assert wrapped is not None and wrapped.action.answer == answer  # type: ignore[union-attr]


def test_a_step_may_only_wait() -> None:
    out = parse_lines("ACCESS r3").value
    assert out is not None and out.access == ["r3"] and out.action is None and not out.delta


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "no step found: start each line with one of ADD, UPDATE, REMOVE, ACCESS, TOOL, "
             "SUMMARY, FINAL (see the reply format)"),
        ("I think the hotel is fine.", "no step found"),
        ("ACCESS r1\nand then some prose", "line 2: expected a line starting with one of"),
        ("ADD hotel decision", 'line 1 (ADD): expected ADD <key> <category> "<summary>"'),
        ('ADD hotel decision "Casa Azul"', "line 1 (ADD): expected ADD <key> <category>"),
        ("ADD hotel decision Casa Azul", "line 1 (ADD): the summary must be a quoted string"),
        ('ADD hotel decision "s" nightly', "line 1 (ADD): the content must be a quoted string"),
        ('ADD hotel decision "s" "c" DEPENDS_ON', "line 1 (ADD): DEPENDS_ON needs a target id"),
        ('ADD hotel decision "s" "c" NEAR r2', "line 1 (ADD): after the content expected "
                                              "<TYPE> <target> or EVIDENCE <ids>, got 'NEAR'"),
        ('ADD hotel decision "s" "c', "line 1 (ADD): not valid JSON at char"),
        ('ADD hotel mood "s" "c"', "line 1 (ADD): category: must be 'preference'"),
        ('UPDATE plan "s" "c" more', "line 1 (UPDATE): unexpected 'more' after the content"),
        ("UPDATE", "line 1 (UPDATE): expected UPDATE <key>"),
        ('ADD {"key": "a"', "line 1 (ADD): not valid JSON: the object starting at char 4 is "
                            "never closed"),
        ('ADD {"key": "a", "category": "mood", "summary": "s", "content": "c"}',
         "line 1 (ADD): category: must be 'preference', 'constraint', 'environment', "
         "'decision' or 'artifact', got 'mood'"),
        ('ACCESS r1\nADD {"key": "a"}', "line 2 (ADD): category: field required"),
        ('ADD {"key": "a", "category": "decision", "summary": "s", "content": "c"} extra',
         "line 1 (ADD): unexpected 'extra' after the JSON object"),
        ("REMOVE", "line 1 (REMOVE): expected REMOVE <key>"),
        ("REMOVE two keys", "line 1 (REMOVE): expected REMOVE <key>"),
        ("TOOL", "line 1 (TOOL): name the tool"),
        ("TOOL {}", "line 1 (TOOL): name the tool"),
        ('TOOL t {"a": 1} because', "line 1 (TOOL): expected CITES <ids> after the arguments"),
        ("TOOL a {}\nTOOL b {}", "line 2 (TOOL): one action per step (a TOOL or a FINAL)"),
        ("TOOL a {}\nFINAL x", "line 2 (FINAL): one action per step"),
        ("FINAL", "line 1 (FINAL): the answer is empty"),
        ("SUMMARY s\nACCESS r1", "line 1 (SUMMARY): a summary goes with a FINAL answer"),
        ('TOOL t {"x": "\\ud800"}', "line 1 (TOOL): arguments.x: text contains a lone surrogate"),
        ('ADD {"key": "a", "bogus": 1, "category": "decision", "summary": "s", "content": "c"}',
         "line 1 (ADD): bogus: unknown field"),
    ],
)  # fmt: skip
def test_mistakes_are_named_by_their_line(text: str, error: str) -> None:
    parsed = parse_lines(text)
    assert parsed.value is None
    assert parsed.error is not None and parsed.error.startswith(error), parsed.error


def test_the_terse_op_form_reads_as_the_json_form() -> None:
    terse = (
        'ADD hotel decision "Casa Azul" "120 EUR a night,\nbreakfast included"'
        " DEPENDS_ON r2.budget REFINES plan EVIDENCE r5.o1 r5.o2\n"
        'UPDATE plan "Plan v2" null\n'
        'ADD prices artifact "Prices seen" {"H7": 120, "H9": 95}\n'
        "SUMMARY Hotel chosen\nFINAL Casa Azul."
    )
    json_form = (
        'ADD {"key": "hotel", "category": "decision", "summary": "Casa Azul", '
        '"content": "120 EUR a night,\\nbreakfast included", "relations": '
        '[{"type": "DEPENDS_ON", "target": "r2.budget"}, {"type": "REFINES", "target": "plan"}], '
        '"evidence": ["r5.o1", "r5.o2"]}\n'
        'UPDATE {"key": "plan", "summary": "Plan v2"}\n'
        'ADD {"key": "prices", "category": "artifact", "summary": "Prices seen", '
        '"content": "{\\"H7\\": 120, \\"H9\\": 95}"}\n'
        "SUMMARY Hotel chosen\nFINAL Casa Azul."
    )
    read = parse_lines(terse)
    assert read.value is not None, read.error
    assert read.value == parse_lines(json_form).value
    assert read.value.delta[0].content == "120 EUR a night,\nbreakfast included"  # type: ignore[union-attr]
    # The line after a content that spans lines is numbered as the reply's own line.
    late = parse_lines('ADD a decision "s" "one\ntwo"\nREMOVE two keys')
    assert late.error is not None and late.error.startswith("line 3 (REMOVE)"), late.error


def test_a_key_the_terse_form_cannot_say_is_written_as_json() -> None:
    step = StepOutput.model_validate(
        {"delta": [{"op": "add", "key": "EVIDENCE", "category": "decision", "summary": "s",
                    "content": "c", "relations": [{"type": "REFINES", "target": "a b"}]}]}
    )  # fmt: skip
    text = render_lines(step)
    assert text.startswith("ADD {")
    assert parse_lines(text).value == step


@pytest.mark.parametrize(
    "text",
    [
        'I will note the budget, then search.\nADD budget constraint "150 EUR" "150"\nTOOL s {}',
        '1. ADD budget constraint "150 EUR" "150"\n2) TOOL s {}',
    ],
)
def test_prose_or_list_numbers_before_the_keyword_lines_do_not_hide_them(text: str) -> None:
    out = parse_step_reply(text).value
    assert out is not None and [op.key for op in out.delta] == ["budget"]
    assert out.action is not None and out.action.name == "s"  # type: ignore[union-attr]


def test_a_reply_with_no_step_is_told_to_write_lines() -> None:
    told = parse_step_reply("The hotel looks fine to me.").error
    assert told is not None and told.startswith("no step found: start each line with one of")


def test_the_keyword_says_which_op() -> None:
    sneaky = parse_lines('ADD {"op": "remove", "key": "budget"}')
    assert sneaky.error == "line 1 (ADD): op: the keyword says which op; leave the field out"


def test_a_content_that_is_not_a_string_is_kept_as_written() -> None:
    out = parse_lines('ADD card environment "Card" {"n": 4111111111111111.1111, "p": 19.90}')
    assert out.value is not None
    assert out.value.delta[0].content == '{"n": 4111111111111111.1111, "p": 19.90}'  # type: ignore[union-attr]


def test_a_tool_without_arguments_does_not_take_a_later_lines_object() -> None:
    out = parse_lines('TOOL list_hotels\nADD k constraint "s" {"a": 1}')
    assert out.value is not None, out.error
    assert out.value.action.arguments == {} and out.value.delta[0].content == '{"a": 1}'  # type: ignore[union-attr]
    spanning = parse_lines('TOOL search\n{"city": "Lisbon"}').value
    assert spanning is not None and spanning.action.arguments == {"city": "Lisbon"}  # type: ignore[union-attr]


def test_a_line_may_end_in_crlf() -> None:
    out = parse_lines('UPDATE plan "Plan v2"\r\nREMOVE draft\r\n')
    assert out.value is not None, out.error
    assert [op.op for op in out.value.delta] == ["update", "remove"]


@pytest.mark.parametrize(
    "text", ['{"action": {"type": "final", "answer": 1X}}', 'TOOL t {"a": 1X}']
)
def test_an_integer_too_long_for_python_is_an_error_not_a_crash(text: str) -> None:
    told = parse_step_reply(text.replace("1X", "1" * 5_000)).error
    assert told is not None and "an integer of 5,000 digits; at most 4,000" in told


def test_hostile_replies_are_bounded() -> None:
    huge = parse_lines("FINAL " + "x" * (MAX_REPLY_CHARS + 1))
    assert huge.error is not None and huge.error.startswith("the reply has")
    deep = parse_lines(
        "TOOL t " + '{"a":' * (MAX_REPLY_DEPTH + 5) + "1" + "}" * (MAX_REPLY_DEPTH + 5)
    )
    assert deep.error is not None and f"at most {MAX_REPLY_DEPTH}" in deep.error
    deep_content = parse_lines(
        'ADD k decision "s" ' + "[" * (MAX_REPLY_DEPTH + 5) + "]" * (MAX_REPLY_DEPTH + 5)
    )
    assert deep_content.error is not None and f"at most {MAX_REPLY_DEPTH}" in deep_content.error
    long_line = parse_lines("ACCESS r1\n" + "y" * 100_000)
    assert long_line.error is not None and len(long_line.error) < 200  # quoted, not echoed
    many = parse_lines("\n".join(f"ACCESS r{i}" for i in range(20_000)))
    assert many.value is not None and len(many.value.access) == 20_000  # the rules bound it


def test_json_replies_are_still_read() -> None:
    parsed = parse_step_reply('{"action": {"type": "final", "answer": "4"}}')
    assert parsed.value is not None and parsed.value.action.answer == "4"  # type: ignore[union-attr]
    fenced = parse_step_reply("```\n\naccess: r1\n```").value
    assert fenced is not None and fenced.access == ["r1"]


@pytest.mark.parametrize(
    ("text", "access", "tool"),
    [
        ('The last search returned {}.\nACCESS r3\nTOOL search {"city": "L"} CITES r3', ["r3"],
         "search"),
        ("Searching {city}:\nTOOL list_hotels {}", [], "list_hotels"),
        ('Final step: book it.\nTOOL book {"hotel": "H7"} CITES r3', [], "book"),
        ('Access to r3 is needed.\n1. Final check\nTOOL search {"q": 1}', [], "search"),
    ],
)  # fmt: skip
def test_prose_is_not_read_as_the_step(text: str, access: list[str], tool: str) -> None:
    out = parse_step_reply(text)
    assert out.value is not None, out.error
    assert out.value.access == access and out.value.action.name == tool  # type: ignore[union-attr]


def test_a_json_step_is_found_past_an_empty_object_in_prose() -> None:
    out = parse_step_reply('Result was {}.\n{"delta": [{"op": "remove", "key": "a"}]}').value
    assert out is not None and [op.key for op in out.delta] == ["a"]
    body = '"body": "Hi,\nFinal: the price is 120 EUR."'
    mail = parse_step_reply(
        'I use {} for defaults.\n{"action": {"type": "tool", "name": "mail", "arguments": '
        + "{"
        + body
        + "}}}"
    ).value
    assert mail is not None and mail.action.name == "mail"  # type: ignore[union-attr]
    fenced = parse_step_reply(
        'An empty step is:\n```json\n{}\n```\nMine:\n```json\n{"access": ["r3"]}\n```'
    ).value
    assert fenced is not None and fenced.access == ["r3"]


def test_a_broken_step_object_is_told_even_beside_an_empty_object() -> None:
    told = parse_step_reply(
        'Passing {} means no filters.\n{"action": {"type": "final", "answer": "x",}}'
    ).error
    assert told is not None and told.startswith("not valid JSON at char"), told


def test_an_unclosed_brace_in_prose_does_not_hide_the_lines() -> None:
    out = parse_step_reply("See the set {a, b.\nACCESS r3\nFINAL ok").value
    assert out is not None and out.access == ["r3"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"delta": [], "action": {"type": "final", "answer": "Booked.\nFinal cost: 360 EUR',
         "not valid JSON: the object starting at char 0 is never closed"),
        ('{"action": {"type": "done", "answer": "x\nFINAL y"}}', "action.type"),
        ('{"access": ["r1"]}\nTOOL search {"q": 1}',
         "the reply has a JSON step object and keyword lines"),
        ('See {x}.\n{"access": ["r3"]}\nFINAL ok',
         "the reply has a JSON step object and keyword lines"),
    ],
)  # fmt: skip
def test_a_json_reply_is_judged_as_json(text: str, error: str) -> None:
    told = parse_step_reply(text).error
    assert told is not None and told.startswith(error), told


def test_runs_of_blanks_are_read_in_linear_time() -> None:
    # A backtracking scan would take hours on these.
    assert parse_step_reply("```" + " " * 100_000 + "{").error is not None
    assert parse_step_reply(" " * 100_000 + "x\nFINAL ok").value is not None  # prose, then FINAL
    assert parse_step_reply("\t" * 100_000 + "\nFINAL ok").value is not None
    many = parse_step_reply("ADD {}\n" * 60_000)  # 120,000 problems, each told once
    assert many.error is not None and many.error.endswith("more")


_IDS = st.from_regex(r"r[1-9][0-9]{0,2}(\.[a-z][a-z0-9_]{0,8})?", fullmatch=True)
_KEY = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
_LINE = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), max_size=40).map(
    str.strip
)
_TEXT = st.text(st.characters(blacklist_categories=["Cs"]), max_size=200)
_ANSWER = _TEXT.map(str.strip).filter(lambda t: t and not t.endswith("```"))
_JSONABLE = st.recursive(
    st.none() | st.booleans() | st.integers() | _LINE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=3),
    max_leaves=8,
)
_OPS = st.one_of(
    st.fixed_dictionaries(
        {"op": st.just("add"), "key": _KEY, "category": st.sampled_from(Category),
         "summary": _LINE, "content": _TEXT,
         "relations": st.lists(st.fixed_dictionaries(
             {"type": st.sampled_from(RelationType), "target": _IDS}), max_size=2),
         "evidence": st.lists(_IDS, max_size=2)}
    ),
    st.fixed_dictionaries({"op": st.just("update"), "key": _KEY},
                          optional={"summary": _LINE, "content": _TEXT}),
    st.fixed_dictionaries({"op": st.just("remove"), "key": _KEY}),
)  # fmt: skip
_ACTIONS = st.none() | st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("tool"), "name": _KEY,
         "arguments": st.dictionaries(_KEY, _JSONABLE, max_size=3),
         "cites": st.lists(_IDS, max_size=3)}
    ),
    st.fixed_dictionaries({"type": st.just("final"), "answer": _ANSWER, "summary": _LINE}),
)  # fmt: skip


@given(delta=st.lists(_OPS, max_size=4), access=st.lists(_IDS, max_size=4), action=_ACTIONS)
def test_any_step_survives_writing_and_reading(delta, access, action) -> None:  # noqa: ANN001
    step = StepOutput.model_validate({"delta": delta, "access": access, "action": action})
    assert parse_step_reply(render_lines(step) or "ACCESS").value == step


def test_module_examples() -> None:
    result = doctest.testmod(flowstate.llm.step_lines)
    assert result.attempted > 0 and result.failed == 0


def _adding(key: str) -> str:
    op = {"op": "add", "key": key, "category": "decision", "summary": "s", "content": "c"}
    return json.dumps({"delta": [op]})


@pytest.mark.parametrize(
    "text",
    [
        f"Here: {_adding('a')}\n```json\n{_adding('b')}\n```",
        f"```json\n{_adding('a')}\n```\nAlso: {_adding('b')}",
    ],
)
def test_a_step_object_outside_the_fence_is_weighed_too(text: str) -> None:
    parsed = parse_step_reply(text)
    assert parsed.error is not None and "two JSON step objects" in parsed.error


@pytest.mark.parametrize("lead", ["\u200b", "\ufeff", "\u00a0", "\u2060 "])
def test_an_invisible_lead_does_not_hide_a_keyword_line(lead: str) -> None:
    reply = f'{lead}ADD a decision "s" "c"\n{lead}ADD b decision "s" "c"\nFINAL ok'
    out = parse_step_reply(reply).value
    assert out is not None and [op.key for op in out.delta] == ["a", "b"]


def test_an_answer_keeps_a_longer_fence_around_a_shorter_one() -> None:
    out = parse_lines('FINAL here:\n````\n```\n````\nADD b decision "s" "c"').value
    assert out is not None and out.action.answer == "here:\n````\n```\n````"  # type: ignore[union-attr]
    assert [op.key for op in out.delta] == ["b"]
