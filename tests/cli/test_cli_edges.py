"""The command line at its edges: a failed run, interrupted requests, hostile files and
content, retention ranges, forgetting drafts, and other writers in the namespace."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import Result

from flowstate.llm import ScriptedModel
from flowstate.settings import Neo4jSettings
from flowstate.store import Repository, Store

pytestmark = pytest.mark.neo4j

ADD = {
    "op": "add",
    "key": "pet",
    "category": "preference",
    "summary": "Has a cat",
    "content": "The user has a cat named Miso",
}


@pytest.fixture
def repo(neo4j_settings: Neo4jSettings, namespace: str) -> Iterator[Repository]:
    with Store.connect(neo4j_settings) as store:
        repo = Repository(store, namespace)
        yield repo
        repo.forget_namespace(force=True)


_SCRIPTS = itertools.count(1)


def _errors(done: Result) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("Error: ")]


def _script(namespace: str, *outputs: dict) -> str:
    """A script under a name of its own (a test may need several); unregistered by the
    `scripted_models` fixture when the test ends."""
    model = ScriptedModel.sequence(f"cli-{namespace}-{next(_SCRIPTS)}", list(outputs))
    return model.model


def _interrupt(cli, namespace: str) -> str:  # noqa: ANN001
    """A run whose model fails after one step: the request is kept as a draft."""
    model = _script(namespace, {"delta": [ADD]})  # then the script runs out
    done = cli("run", "I have a cat", "-N", namespace, "-m", model)
    assert done.exit_code == 1, done.output
    [error] = _errors(done)
    assert "Request r1 is kept: `flowstate resume r1 -N" in error
    assert f"`flowstate discard r1 -N {namespace}` drops it" in error
    return model


# --- a failed run does not lock the namespace -----------------------------------------------


def test_an_interrupted_run_is_shown_then_resumed(cli, namespace: str, repo: Repository) -> None:  # noqa: ANN001
    _interrupt(cli, namespace)
    other = _script(namespace, {"action": {"type": "final", "answer": "meanwhile"}})
    again = cli("run", "something else", "-N", namespace, "-m", other, "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["request_id"] == "r2"  # not blocked
    shown = cli("pending", "-N", namespace)
    assert shown.exit_code == 0 and "r1: interrupted after step 1" in shown.stdout
    assert "I have a cat" in shown.stdout
    [data] = json.loads(cli("pending", "-N", namespace, "--json").stdout)
    assert (data["request_id"], data["steps"], data["held"]) == ("r1", 1, False)
    model = _script(namespace, {"action": {"type": "final", "answer": "Noted, Miso."}})
    resumed = cli("resume", "-N", namespace, "-m", model, "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["answer"] == "Noted, Miso."
    assert [s.id for b in repo.bundles() if b.request.id == "r1" for s in b.states] == ["r1.pet"]
    assert "No open request" in cli("pending", "-N", namespace).stdout
    nothing = cli("resume", "-N", namespace, "-m", model)
    assert nothing.exit_code == 2 and "no interrupted request" in _errors(nothing)[0]


def test_an_interrupted_run_is_discarded_and_its_id_not_reused(
    cli,
    namespace: str,
    repo: Repository,  # noqa: ANN001
) -> None:
    model = _interrupt(cli, namespace)
    refused = cli("discard", "-N", namespace, input="n\n")
    assert refused.exit_code == 1 and repo.open_requests() != []
    done = cli("discard", "-N", namespace, "--yes")
    assert done.exit_code == 0 and "Discarded request r1" in done.stdout
    assert repo.open_requests() == []
    model = _script(namespace, {"action": {"type": "final", "answer": "ok"}})
    fresh = cli("run", "again", "-N", namespace, "-m", model, "--json")
    assert json.loads(fresh.stdout)["request_id"] == "r2"
    assert cli("discard", "-N", namespace, "--yes").exit_code == 2  # nothing to discard


def test_a_missing_api_key_is_named_at_once_and_keeps_nothing(
    cli,
    namespace: str,
    repo: Repository,
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    done = cli("run", "hello", "-N", namespace, "-m", "gpt-4o-mini")
    assert done.exit_code == 2
    [error] = _errors(done)
    assert "needs OPENAI_API_KEY in the environment" in error
    assert "request" not in error and "InternalServerError" not in error
    assert repo.open_requests() == [] and repo.next_request_seq() == 1  # no id handed out
    assert "No open request" in cli("pending", "-N", namespace).stdout


def test_an_unknown_model_is_refused_before_anything_is_written(
    cli,
    namespace: str,
    repo: Repository,  # noqa: ANN001
) -> None:
    done = cli("run", "hello", "-N", namespace, "-m", "gtp-4o")
    assert done.exit_code == 2 and "unknown model 'gtp-4o'" in _errors(done)[0]
    assert repo.counts().nodes == 0 and repo.stamp().epoch is None


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("os:sep", "is a str, not a list of tools"),
        ("os:getcwd", "is a str, not a list of tools"),
        ("json:__all__", "is neither a function nor a Tool"),
    ],
)
def test_tools_that_are_not_a_list_of_tools_are_a_usage_error(
    cli,
    namespace: str,
    spec: str,
    message: str,  # noqa: ANN001
) -> None:
    done = cli("run", "hi", "-N", namespace, "-m", "gpt-4o-mini", "--tools", spec)
    assert done.exit_code == 2 and message in _errors(done)[0]


# --- forgetting: drafts, confirmation, a running writer -------------------------------------


def test_forget_all_removes_a_namespace_holding_only_a_draft(
    cli,
    namespace: str,
    repo: Repository,  # noqa: ANN001
) -> None:
    _interrupt(cli, namespace)
    done = cli("forget", "--all", "-N", namespace, "--yes")
    assert done.exit_code == 0, done.output
    assert "the interrupted request r1" in done.stdout
    assert repo.open_requests() == [] and repo.counts().nodes == 0
    empty = cli("forget", "--all", "-N", namespace, "--yes")
    assert empty.exit_code == 2 and "holds nothing to forget" in _errors(empty)[0]


def test_forget_all_is_refused_while_a_request_runs(
    cli,
    namespace: str,
    repo: Repository,  # noqa: ANN001
) -> None:
    _interrupt(cli, namespace)
    repo.save_draft("r5", "{}", owner="other-host:4242:cafe", first=True)  # running elsewhere
    done = cli("forget", "--all", "-N", namespace, "--yes")
    assert done.exit_code == 1
    assert "writer other-host:4242:cafe runs request r5" in _errors(done)[0]
    assert "r5: running, held by other-host:4242:cafe" in cli("pending", "-N", namespace).stdout
    assert cli("discard", "r5", "-N", namespace, "--yes").exit_code == 1  # not from under it
    assert {r.request_id for r in repo.open_requests()} == {"r1", "r5"}


def test_confirmation_without_an_answer_is_a_usage_error(
    cli,
    namespace: str,
    repo: Repository,  # noqa: ANN001
) -> None:
    _interrupt(cli, namespace)
    done = cli("discard", "-N", namespace)  # empty standard input
    assert done.exit_code == 2 and "no answer on standard input; add --yes" in _errors(done)[0]


def test_forget_with_standard_input_closed_is_a_usage_error(
    neo4j_settings: Neo4jSettings, namespace: str
) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("flowstate")), "forget", "r1", "-N", namespace],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "FLOWSTATE_NEO4J_URI": neo4j_settings.uri},
        preexec_fn=lambda: os.close(0),  # noqa: PLW1509
    )
    assert done.returncode == 2, done.stderr
    assert "standard input is closed" in done.stderr and "Traceback" not in done.stderr


# --- hostile files and content ---------------------------------------------------------------


def test_import_refuses_bytes_huge_integers_and_deep_nesting(
    cli,
    namespace: str,
    tmp_path: Path,
    repo: Repository,  # noqa: ANN001
) -> None:
    cases = {
        "bytes.bin": (bytes(range(128, 256)) * 3, "not UTF-8 text"),
        "seq.jsonl": (
            json.dumps({"kind": "request", "id": f"r{2**63}", "seq": 2**63}).encode(),
            "beyond Neo4j's 64-bit integers",
        ),
        "deep.jsonl": (b"[" * 200_000, "nested too deeply"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        done = cli("import", str(path), "-N", namespace)
        assert done.exit_code == 2, (name, done.output)
        assert message in _errors(done)[0], name
    assert repo.counts().nodes == 0 and repo.stamp().epoch is None


def test_importing_an_empty_file_warns(cli, namespace: str, tmp_path: Path) -> None:  # noqa: ANN001
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    done = cli("import", str(empty), "-N", namespace)
    assert done.exit_code == 0 and "holds no records; nothing imported" in done.stderr


def test_export_to_a_missing_folder_is_a_usage_error(
    cli,
    namespace: str,
    tmp_path: Path,
    repo: Repository,  # noqa: ANN001
) -> None:
    model = _script(namespace, {"delta": [ADD], "action": {"type": "final", "answer": "ok"}})
    assert cli("run", "cat", "-N", namespace, "-m", model).exit_code == 0
    done = cli("export", "-N", namespace, "-o", str(tmp_path / "missing" / "out.jsonl"))
    assert done.exit_code == 2 and "cannot write" in _errors(done)[0]


def test_terminal_escapes_in_content_are_shown_neutralised(
    cli,
    namespace: str,
    repo: Repository,  # noqa: ANN001
) -> None:
    hostile = "\x1b]0;pwned\x07\x1b[2J\x1b[31mred\u202egnp.exe\x9b"
    add = {**ADD, "summary": f"cat {hostile}", "content": f"Miso {hostile}"}
    model = _script(namespace, {"delta": [add], "action": {"type": "final", "answer": hostile}})
    ran = cli("run", f"cat {hostile}", "-N", namespace, "-m", model)  # the summary, too
    assert ran.exit_code == 0, ran.output
    for args in (["show", "r1.pet"], ["show", "r1"], ["index"], ["history"]):
        done = cli(*args, "-N", namespace)
        assert done.exit_code == 0, args
        for char in "\x1b\x07\x9b\u202e":
            assert char not in done.stdout, (args, char)
        assert "\\x1b[31mred" in done.stdout, args
    assert "\x1b" not in ran.stdout and "\\x1b[2J" in ran.stdout
    as_json = json.loads(cli("show", "r1.pet", "-N", namespace, "--json").stdout)
    assert as_json["content"] == f"Miso {hostile}"  # JSON keeps the exact text, escaped


# --- show, namespaces --------------------------------------------------------------------------


def test_show_marks_superseded_states_and_shows_decisions(cli, namespace: str) -> None:  # noqa: ANN001
    assert cli("demo", "-N", namespace, "--json").exit_code == 0
    try:
        state = cli("show", "r2.budget", "-N", namespace)
        assert "r2.budget [constraint]" in state.stdout.splitlines()[0]
        assert "(SUPERSEDED by r5.budget)" in state.stdout.splitlines()[0]
        request = cli("show", "r2", "-N", namespace).stdout
        assert any(
            "r2.budget" in ln and "SUPERSEDED by r5.budget" in ln for ln in request.splitlines()
        )
        assert json.loads(cli("show", "r2.budget", "-N", namespace, "--json").stdout)[
            "superseded_by"
        ] == ["r5.budget"]
        decision = cli("show", "r4.a1", "-N", namespace)
        assert decision.exit_code == 0, decision.output
        assert decision.stdout.startswith("r4.a1 book_hotel(") and "citing r" in decision.stdout
        assert json.loads(cli("show", "r4.a1", "-N", namespace, "--json").stdout)["kind"] == (
            "decision"
        )
        listed = json.loads(cli("namespaces", "--json").stdout)
        [mine] = [n for n in listed if n["namespace"] == namespace]
        assert mine["requests"] == 8 and mine["last_seq"] == 8 and mine["drafts"] == 0
        assert mine["states"] > 8 and mine["decisions"] >= 1
        human = cli("namespaces").stdout
        assert any(ln.startswith(f"{namespace}  8 requests") for ln in human.splitlines())
    finally:
        cli("forget", "--all", "-N", namespace, "--yes")


# --- retention ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "policy", ['{"observation": -1}', '{"observation": 99999999999}', '{"artifact": 1.5}']
)
def test_retention_days_out_of_range_are_refused(cli, namespace: str, policy: str) -> None:  # noqa: ANN001
    done = cli("retention", "apply", "-N", namespace, "--policy", policy, "--yes")
    assert done.exit_code == 2
    assert _errors(done)[0].startswith("Error: --policy: invalid")
    assert "0 to 36500" in _errors(done)[0] and "Traceback" not in done.output


def test_a_bad_retention_variable_is_named_and_spares_read_only_commands(
    cli,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    model = _script(namespace, {"delta": [ADD], "action": {"type": "final", "answer": "ok"}})
    assert cli("run", "cat", "-N", namespace, "-m", model).exit_code == 0
    try:
        monkeypatch.setenv("FLOWSTATE_RETENTION", '{"observation": -3}')
        assert cli("history", "-N", namespace).exit_code == 0
        assert cli("index", "-N", namespace).exit_code == 0
        assert cli("show", "r1.pet", "-N", namespace).exit_code == 0
        written = cli("forget", "r1.pet", "-N", namespace, "--yes")
        assert written.exit_code == 2
        assert _errors(written)[0].startswith("Error: FLOWSTATE_RETENTION: invalid")
        from_env = cli("retention", "apply", "-N", namespace, "--yes")
        assert _errors(from_env)[0].startswith("Error: FLOWSTATE_RETENTION: invalid")
        monkeypatch.setenv("FLOWSTATE_RETENTION", '{"preference": 0}')
        said = cli("forget", "r9", "-N", namespace, "--yes")  # opens for writing
        assert "FLOWSTATE_RETENTION (preference: 0 days): expired 1 preference node." in (
            said.stderr
        )
    finally:
        monkeypatch.delenv("FLOWSTATE_RETENTION")
        cli("forget", "--all", "-N", namespace, "--yes")


def test_forget_all_is_refused_when_a_request_begins_while_the_prompt_waits(
    cli,
    namespace: str,
    repo: Repository,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _interrupt(cli, namespace)
    cli("discard", "-N", namespace, "--yes")
    before = repo.counts()

    def a_writer_begins_then_yes(_question: str) -> None:
        repo.save_draft("r9", "{}", owner="other-host:4242:beef", first=True)  # meanwhile

    monkeypatch.setattr("flowstate.cli.memory_commands.confirm", a_writer_begins_then_yes)
    done = cli("forget", "--all", "-N", namespace)
    assert done.exit_code == 1
    assert "writer other-host:4242:beef runs request r9" in _errors(done)[0]
    assert repo.counts().nodes == before.nodes + 1  # nothing deleted from under the request
