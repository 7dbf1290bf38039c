"""Every command through click's runner, against the real Neo4j of the test session."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import Result

from flowstate.cli.app import main
from flowstate.demo.scenario import EXPECTED_TOTAL_EUR
from flowstate.llm import ScriptedModel
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store

pytestmark = pytest.mark.neo4j


def _json(result: Result) -> Any:
    return json.loads(result.stdout)


def test_demo_runs_to_the_end_and_reports_figures(cli, demo_ns: str) -> None:  # noqa: ANN001
    again = cli("demo", "-N", demo_ns, "--reset", "--json")
    assert again.exit_code == 0, again.output
    report = _json(again)
    rows = report["requests"]
    assert [r["request_id"] for r in rows] == [f"r{n}" for n in range(1, 9)]
    assert all(r["outcome"] == "answered" for r in rows)
    # Both agents reach the same plan, each from its own memory of the earlier requests.
    assert f"total {EXPECTED_TOTAL_EUR} EUR" in rows[-1]["answer"]
    assert f"total {EXPECTED_TOTAL_EUR} EUR" in rows[-1]["plain_answer"]
    assert sum(r["revealed"] for r in rows) > 0
    totals = report["totals"]
    for side in ("flowstate", "plain"):
        bill = totals[side]
        assert bill["tokens"] == sum(r[side]["tokens"] for r in rows)
        assert bill["tokens"] == bill["prompt_tokens"] + bill["completion_tokens"]
        assert bill["completion_tokens"] > 0
    assert totals["ratio"] == round(totals["flowstate"]["tokens"] / totals["plain"]["tokens"], 4)
    assert 0 <= totals["prefetch"]["precision"] <= 1
    assert f"namespace: '{demo_ns}'" in report["browser_query"]


def test_running_the_demo_again_measures_in_a_fresh_namespace(
    cli,  # noqa: ANN001
    demo_ns: str,
    neo4j_settings: Neo4jSettings,
) -> None:
    first = _json(cli("history", "-N", demo_ns, "--json"))
    second = cli("demo", "-N", demo_ns, "--json")
    assert second.exit_code == 0, second.output
    report = _json(second)
    fresh = f"{demo_ns}-2"
    try:
        assert report["namespace"] == fresh
        rows = report["requests"]
        assert rows[0]["request_id"] == "r1" and rows[-1]["request_id"] == "r8"
        assert f"total {EXPECTED_TOTAL_EUR} EUR" in rows[-1]["answer"]
        assert _json(cli("history", "-N", demo_ns, "--json")) == first  # left as it was
    finally:
        with Store.connect(neo4j_settings) as store:
            Repository(store, fresh).forget_namespace(force=True)


def test_demo_human_output_has_the_table_and_browser_query(cli, namespace: str) -> None:  # noqa: ANN001
    done = cli("demo", "-N", namespace, "--reset")
    assert done.exit_code == 0
    said = " ".join(done.stdout.split())
    assert "total" in said and "billed" in said and "the plain agent's tokens" in said
    assert f"MATCH (r:Request {{namespace: '{namespace}'}})" in done.stdout
    cli("forget", "--all", "-N", namespace, "--yes")


def test_index_history_and_show(cli, demo_ns: str) -> None:  # noqa: ANN001
    index = cli("index", "-N", demo_ns)
    assert index.exit_code == 0
    assert "r3.hotel_choice [decision]" in index.stdout
    assert re.search(r"\(\d+ tokens; budget 600\)", index.stdout)
    assert _json(cli("index", "-N", demo_ns, "--json"))["tokens"] > 0
    history = _json(cli("history", "-N", demo_ns, "--json"))
    assert [h["id"] for h in history] == [f"r{n}" for n in range(1, 9)]
    state = cli("show", "r3.hotel_choice", "-N", demo_ns)
    assert "DERIVED_FROM -> r2.hotel_options" in state.stdout
    assert "hotel_options" in state.stdout and "2 boutique hotels fit" not in state.stdout
    request = _json(cli("show", "r4", "-N", demo_ns, "--json"))
    assert [s["id"] for s in request["states"]] == ["r4.hotel_booking"]
    obs = _json(cli("show", "r4.o2", "-N", demo_ns, "--json"))
    assert obs["tool"] == "book_hotel" and "BK-001" in obs["output"]


def test_export_import_round_trip(cli, demo_ns: str, tmp_path: Path, namespace: str) -> None:  # noqa: ANN001
    out = tmp_path / "mem.jsonl"
    assert cli("export", "-N", demo_ns, "-o", str(out)).exit_code == 0
    copy = f"{namespace}_copy"
    imported = cli("import", str(out), "-N", copy, "--json")
    assert imported.exit_code == 0, imported.output
    assert _json(imported)["nodes"] > 0
    again = cli("export", "-N", copy)
    assert again.stdout.replace(copy, demo_ns) == out.read_text()
    assert cli("forget", "--all", "-N", copy, "--yes").exit_code == 0


def test_forget_asks_and_counts(cli, demo_ns: str) -> None:  # noqa: ANN001
    refused = cli("forget", "r8", "-N", demo_ns, input="n\n")
    assert refused.exit_code == 1 and "Aborted" in refused.output
    assert len(_json(cli("history", "-N", demo_ns, "--json"))) == 8
    done = _json(cli("forget", "r8", "-N", demo_ns, "--yes", "--json"))
    assert done["nodes"] >= 2
    assert len(_json(cli("history", "-N", demo_ns, "--json"))) == 7
    state = cli("forget", "r7.dinner", "-N", demo_ns, "--yes")
    assert state.exit_code == 0 and ": 1 node, " in state.stdout


def test_run_goes_through_the_agent(cli, namespace: str) -> None:  # noqa: ANN001
    ScriptedModel.sequence(
        f"cli-{namespace}",
        [
            {
                "delta": [
                    {
                        "op": "add",
                        "key": "pet",
                        "category": "preference",
                        "summary": "Has a cat",
                        "content": "The user has a cat named Miso",
                    }
                ],
                "action": {"type": "final", "answer": "Noted, Miso the cat.", "summary": "Pet"},
            },
        ],
    )
    done = cli(
        "run",
        "I have a cat named Miso",
        "-N",
        namespace,
        "-m",
        f"flowstate-scripted/cli-{namespace}",
        "--json",
    )
    assert done.exit_code == 0, done.output
    data = _json(done)
    assert data["answer"] == "Noted, Miso the cat." and data["states_added"] == ["r1.pet"]
    cli("forget", "--all", "-N", namespace, "--yes")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["show", "r99.ghost"], 2, "not found in namespace"),
        (["show", "x}) DETACH DELETE n //"], 2, "is not an id like"),
        (["history"], 2, "has no requests"),
        (["index"], 2, "has no requests"),
        (["export"], 2, "has no requests"),
        (["forget"], 2, "give either an id or --all"),
        (["forget", "r1", "--yes"], 2, "not found"),
        (["history", "-N", "bad namespace!"], 2, "invalid namespace"),
        (["run", "hi", "-m", "flowstate-scripted/none-registered"], 1, "model"),
        (["run", "hi", "-m", "x", "--tools", "nomodule:TOOLS"], 2, "--tools 'nomodule:TOOLS'"),
    ],
)
def test_bad_input_gives_one_clear_line_and_a_nonzero_exit(
    cli,
    namespace: str,
    args: list[str],
    code: int,
    message: str,  # noqa: ANN001
) -> None:
    if "-N" not in args:
        args = [*args, "-N", namespace]
    done = cli(*args)
    assert done.exit_code == code, done.output
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1 and message in errors[0], done.stderr


def test_malformed_import_changes_nothing(cli, namespace: str, tmp_path: Path) -> None:  # noqa: ANN001
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "request"}\nnot json\n')
    done = cli("import", str(bad), "-N", namespace)
    assert done.exit_code == 2 and "line 1" in done.stderr
    assert cli("history", "-N", namespace).exit_code == 2  # still empty


def test_unreachable_neo4j_is_one_line(
    cli, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:  # noqa: ANN001
    monkeypatch.setenv("FLOWSTATE_NEO4J_URI", "bolt://127.0.0.1:1")
    done = cli("history", "-N", namespace)
    assert done.exit_code == 1
    assert (
        done.stderr.count("\n") == 1
        and "no Neo4j server answered at bolt://127.0.0.1:1" in done.stderr
    )


def _subcommands(group: click.Group) -> dict[str, click.Command]:
    """Built-in and plugin commands alike (plugins are not in `group.commands`)."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


def _commands(group: click.Group) -> list[click.Command]:
    found: list[click.Command] = []
    for command in _subcommands(group).values():
        found.append(command)
        if isinstance(command, click.Group):
            found += _commands(command)
    return found


def test_every_command_has_help_with_an_example() -> None:
    missing = [c.name for c in _commands(main) if "Example" not in (c.help or "")]
    assert missing == []


def test_why_prints_the_evidence_chain_with_validity(cli, demo_ns: str) -> None:  # noqa: ANN001
    done = cli("why", "r2.hotel_options", "-N", demo_ns)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].startswith("r2.hotel_options [environment]")
    assert any(
        "DEPENDS_ON r2.budget" in line and "(SUPERSEDED by r5.budget)" in line for line in lines
    )
    assert any(
        line.lstrip("│├└─ ").startswith("EVIDENCED_BY r2.o1 search_hotels(") for line in lines
    )
    assert "  r2 " in done.stdout and "Requests:" in done.stdout
    data = _json(cli("why", "r8.plan_summary", "-N", demo_ns, "--json"))
    assert {"r4.hotel_booking", "r6.outbound_flight", "r7.dinner"} <= {
        s["id"] for s in data["states"]
    }
    assert data["superseded"] == {"r2.budget": ["r5.budget"]}
    assert cli("why", "r9.ghost", "-N", demo_ns).exit_code == 2
    assert cli("why", "r2", "-N", demo_ns).exit_code == 2


def test_retention_apply_expires_and_counts(cli, demo_ns: str) -> None:  # noqa: ANN001
    policy = ["--policy", '{"observation": 0}']
    refused = cli("retention", "apply", "-N", demo_ns, *policy, input="n\n")
    assert refused.exit_code == 1 and "Expire 4 observation records of" in refused.output
    # r4.o2, the booking, is cited; r4.o1, the details page it read first, was not kept.
    assert cli("show", "r4.o2", "-N", demo_ns).exit_code == 0  # nothing expired yet
    done = _json(cli("retention", "apply", "-N", demo_ns, *policy, "--yes", "--json"))
    assert done["observation"]["nodes"] == 4  # the cited results of r2, r4, r6 and r7
    shown = cli("show", "r4.o2", "-N", demo_ns)
    assert shown.exit_code == 2
    again = cli("retention", "apply", "-N", demo_ns, *policy)
    assert again.exit_code == 0 and "nothing to expire" in again.stdout
    bad = cli("retention", "apply", "-N", demo_ns, "--policy", "{nope")
    assert bad.exit_code == 2 and "--policy: '{nope' is not JSON" in bad.stderr


def test_retention_from_the_environment_applies_on_open(
    cli,
    demo_ns: str,
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    monkeypatch.setenv("FLOWSTATE_RETENTION", '{"artifact": 0}')
    assert cli("forget", "r99", "-N", demo_ns, "--yes").exit_code == 2  # opened for writing
    monkeypatch.delenv("FLOWSTATE_RETENTION")
    index = cli("index", "-N", demo_ns).stdout
    assert "[artifact]" not in index and "[decision]" in index


def test_demo_with_a_model_says_per_call_whether_it_followed_the_protocol(
    cli,  # noqa: ANN001
    namespace: str,
) -> None:
    """`-m` runs both agents on that model and tells, call by call, whether FlowState's
    replies were read and accepted: here the model's first reply is prose."""
    from flowstate.demo.plain import PLAIN_SYSTEM
    from flowstate.demo.plain_script import plain_policy
    from flowstate.demo.scenario import ScriptedPlanner

    planner, replies = ScriptedPlanner(), []

    def model(messages: list[dict[str, Any]]) -> Any:
        if messages[0]["content"] == PLAIN_SYSTEM:
            return plain_policy(messages)
        replies.append(messages)
        return "Sure, noted!" if len(replies) == 1 else planner(messages)

    with ScriptedModel.policy(f"protocol_{namespace[-8:]}", model) as scripted:
        done = cli("demo", "-N", namespace, "-m", scripted.model)
    try:
        assert done.exit_code == 0, done.output
        said = done.stderr
        assert "r1 call 1: did not: " in said and "r1 call 2: followed the protocol" in said
        assert "r8 call 1: followed the protocol" in said
    finally:
        cli("forget", "--all", "-N", namespace, "--yes")
