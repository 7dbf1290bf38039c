"""The documentation is kept true by tests (README.md and docs/).

- Every command of `flowstate` (the click tree, plugin commands included) has a section in
  docs/cli.md with an example and every option; every `flowstate ...` command the docs show
  exists and parses.
- Every Python block runs against the real Neo4j of the test session, twice in a row in the
  same namespaces, or says why not; every `print` in it says what it prints in `#>` comments
  (tests/cli/doc_outputs.py), and prints that.
- Every setting is in docs/configuration.md; every `FLOWSTATE_*` variable the docs name
  exists; every relative link leads somewhere; the README stays short.

How a Python block is marked, on the line before its fence (an HTML comment, not rendered):

    <!-- docs: skip: needs a provider key -->   not run; the reason is required
    <!-- docs: continue -->                     runs after the file's previous block, with
                                                its names (one test for the chain)

Any other Python block runs as it is, with no FLOWSTATE_* variable set. Namespaces it names
(`namespace="trips"`) get a suffix of their own and are forgotten afterwards; the documented
default address (`bolt://127.0.0.1:7687`) is pointed at the test session's server. Models are
scripted (`ScriptedModel`): no block calls a provider.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest

from flowstate.cli.app import main
from flowstate.settings import DEFAULT_URI, LocalServerSettings, MemorySettings, Neo4jSettings
from tests.cli.doc_outputs import Printed, matches, promises

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
CLI_DOC = DOCS / "cli.md"
CONFIG_DOC = DOCS / "configuration.md"
README_MAX_LINES = 250
# Chapters written elsewhere that the docs link to before they land.
COMING = {"docs/mcp.md", "bench/docs/tau.md", "bench/docs/arena.md"}
# Commands whose options are documented in their own chapter; docs/cli.md links there.
OPTIONS_ELSEWHERE = {
    "flowstate bench tau": "../bench/docs/tau.md",
    "flowstate bench arena": "../bench/docs/arena.md",
}
# Command families of other distributions (`flowstate.commands` entry points).
PLUGINS = ("flowstate bench",)
PYTHON = {"python", "py", "python3"}
SHELL = {"bash", "sh", "shell", "console", "zsh"}
MARKER = re.compile(r"<!--\s*docs:\s*(?P<what>skip|continue)\b(?P<rest>.*?)-->")


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


# --- reading Markdown ----------------------------------------------------------------------


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    marker: str | None = None  # "skip" or "continue"
    reason: str = ""

    @property
    def where(self) -> str:
        return where(self.path, self.line)


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, with the marker on the line before each."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        opening = re.match(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)", lines[i])
        if not opening:
            i += 1
            continue
        indent, fence, lang = opening.groups()
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        block = Block(path, start + 1, lang.lower(), "\n".join(body) + "\n")
        before = next((ln for ln in reversed(lines[:start]) if ln.strip()), "")
        if marked := MARKER.search(before):
            block.marker = marked["what"]
            block.reason = marked["rest"].strip(" :—-")
        found.append(block)
    return found


def prose(path: Path) -> str:
    """The file without its fenced code blocks."""
    return re.sub(r"^(\s*)(`{3,}|~{3,}).*?^\s*\2\s*$", "", path.read_text(), flags=re.S | re.M)


def all_blocks() -> list[Block]:
    return [b for path in markdown_files() for b in blocks(path)]


# --- the click tree --------------------------------------------------------------------------


def subcommands(group: click.Group) -> dict[str, click.Command]:
    """Built-in and plugin commands alike (plugins are not in `group.commands`)."""
    ctx = click.Context(group)
    found = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


def command_tree(group: click.Group = main, prefix: str = "flowstate") -> dict[str, click.Command]:
    tree: dict[str, click.Command] = {}
    for name, command in subcommands(group).items():
        tree[f"{prefix} {name}"] = command
        if isinstance(command, click.Group):
            tree |= command_tree(command, f"{prefix} {name}")
    return tree


def long_options(command: click.Command) -> list[str]:
    return [
        max(p.opts, key=len)
        for p in command.params
        if isinstance(p, click.Option) and max(p.opts, key=len) != "--help"
    ]


def parse(args: list[str], env: dict[str, str] | None = None) -> str:
    """Parse a documented `flowstate` command line as click would run it, with the `env`
    assignments written before it; the command's path (`flowstate neo4j start`). Raises
    click.UsageError for an unknown command or option, a missing argument or a bad value (a
    file the reader would bring, like `demo.jsonl`, need not exist)."""
    command: click.Command = main
    path, parent = ["flowstate"], None
    quiet = contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO())
    with quiet[0], quiet[1], environment(env or {}):
        while True:
            try:
                ctx = command.make_context(path[-1], list(args), parent=parent)
            except click.exceptions.Exit:  # --help, --version: valid, and done
                return " ".join(path)
            except click.BadParameter as e:
                if not isinstance(getattr(e.param, "type", None), click.File):
                    raise
                return " ".join(path)  # a file to read: the reader's own
            if not isinstance(command, click.Group):
                return " ".join(path)
            rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
            if not rest:
                return " ".join(path)
            name, sub, args = command.resolve_command(ctx, rest)
            assert name is not None and sub is not None
            path.append(name)
            command, parent = sub, ctx


@contextlib.contextmanager
def environment(env: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def command_path(words: list[str]) -> str:
    """The command path of an inline mention (`flowstate forget ID`): subcommand names only,
    checked; arguments and options are not parsed."""
    command: click.Command
    command, path = main, ["flowstate"]
    for word in words:
        if not isinstance(command, click.Group) or word.startswith("-") or "..." in word:
            break  # an option, an argument, or `flowstate neo4j ...`
        found = subcommands(command).get(word)
        if found is None:
            raise click.UsageError(f"no command {' '.join(path)} {word}")
        command = found
        path.append(word)
    return " ".join(path)


@dataclass(frozen=True)
class Invocation:
    line: int
    args: list[str]  # after `flowstate`
    env: dict[str, str]  # VAR=value written before it


def shell_commands(block: Block) -> Iterator[Invocation]:
    """Each `flowstate ...` invocation of a shell block."""
    joined: list[tuple[int, str]] = []
    pending, first = "", 0
    for n, line in enumerate(block.text.splitlines(), start=block.line + 1):
        if not pending:
            first = n
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined.append((first, pending + line))
        pending = ""
    for n, line in joined:
        line = re.sub(r"^\s*\$\s+", "", line)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
        simple: list[list[str]] = [[]]
        redirected = False
        for token in tokens:
            if redirected:  # the file of `> demo.jsonl`
                redirected = False
            elif re.fullmatch(r"[<>]+&?", token):
                redirected = True
                if simple[-1] and simple[-1][-1].isdigit():
                    simple[-1].pop()  # the 2 of `2> log`
            elif token in {"&&", "||", ";", "|", "&", "(", ")"}:
                simple.append([])
            else:
                simple[-1].append(token)
        for words in simple:
            env = {}
            while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                name, _, value = words[0].partition("=")
                env[name] = value
                words = words[1:]
            if words and "--" in words and words[0] != "flowstate":
                words = words[words.index("--") + 1 :]  # `claude mcp add ... -- flowstate ...`
            if words and re.fullmatch(r"(.*/)?flowstate|\$\(command -v flowstate\)", words[0]):
                yield Invocation(n, words[1:], env)


# --- the command line ----------------------------------------------------------------------


@dataclass
class Section:
    """The part of docs/cli.md under a heading that names a command."""

    first: int  # line of the heading, 1-based
    last: int  # last line before the next heading of the same or a higher level
    text: str


def cli_sections() -> dict[str, Section]:
    lines = CLI_DOC.read_text().splitlines()
    fenced = {b.line + i for b in blocks(CLI_DOC) for i in range(len(b.text.splitlines()) + 2)}
    heads = [
        (n, len(m[1]), m[2].strip())
        for n, line in enumerate(lines, start=1)
        if n not in fenced and (m := re.match(r"^(#{2,6})\s+`?(flowstate[^`]*)`?\s*$", line))
    ]
    levels = [
        (n, len(m[1]))
        for n, line in enumerate(lines, start=1)
        if n not in fenced and (m := re.match(r"^(#{1,6})\s", line))
    ]
    sections = {}
    for n, level, name in heads:
        last = next((k - 1 for k, lv in levels if k > n and lv <= level), len(lines))
        sections[name] = Section(n, last, "\n".join(lines[n - 1 : last]))
    return sections


def test_every_command_has_a_section_in_the_cli_chapter() -> None:
    missing = sorted(set(command_tree()) - set(cli_sections()))
    assert missing == [], f"add a `## flowstate ...` section to docs/cli.md for {missing}"


def test_every_command_section_names_a_real_command() -> None:
    tree = command_tree()
    # Without flowstate-bench, `flowstate bench` is a stand-in that says how to install it.
    missing_plugins = [name for name in PLUGINS if not isinstance(tree.get(name), click.Group)]
    unknown = sorted(
        name
        for name in set(cli_sections()) - set(tree)
        if not any(name.startswith(f"{plugin} ") for plugin in missing_plugins)
    )
    assert unknown == []


def test_every_command_section_shows_an_example_of_it() -> None:
    shown: dict[str, set[str]] = {}
    sections = cli_sections()
    for block in blocks(CLI_DOC):
        if block.lang not in SHELL:
            continue
        for run in shell_commands(block):
            for name, section in sections.items():
                if section.first <= run.line <= section.last:
                    shown.setdefault(name, set()).add(parse(run.args, run.env))
    lacking = []
    for name, command in command_tree().items():
        examples = shown.get(name, set())
        if isinstance(command, click.Group):  # a group's example may be of a subcommand
            examples = {e for e in examples if e == name or e.startswith(f"{name} ")}
        else:
            examples &= {name}
        if not examples:
            lacking.append(name)
    assert lacking == []


def test_every_option_is_documented_in_its_section() -> None:
    sections = cli_sections()
    missing = []
    for name, command in command_tree().items():
        text = sections[name].text if name in sections else ""
        if name in OPTIONS_ELSEWHERE:
            if OPTIONS_ELSEWHERE[name] not in text:
                missing.append(f"{name}: link to {OPTIONS_ELSEWHERE[name]}")
            continue
        missing += [f"{name} {o}" for o in long_options(command) if f"`{o}" not in text]
    assert missing == []


def test_every_documented_command_exists_and_parses() -> None:
    wrong = []
    for block in all_blocks():
        if block.lang not in SHELL:
            continue
        for run in shell_commands(block):
            try:
                parse(run.args, run.env)
            except click.UsageError as e:
                wrong.append(
                    f"{where(block.path, run.line)}: flowstate {shlex.join(run.args)}: {e}"
                )
    assert wrong == []


def test_every_command_named_in_the_prose_exists() -> None:
    wrong = []
    for path in markdown_files():
        for span in re.findall(r"`(flowstate(?: [^`]*)?)`", prose(path)):
            try:
                command_path(span.split()[1:])
            except click.UsageError as e:
                wrong.append(f"{path.relative_to(ROOT)}: `{span}`: {e}")
    assert wrong == []


def test_mcp_configurations_run_real_commands() -> None:
    """JSON blocks that configure an MCP host start `flowstate` with arguments that parse."""
    wrong = []
    for block in all_blocks():
        if block.lang != "json" or '"mcpServers"' not in block.text:
            continue
        for name, server in json.loads(block.text)["mcpServers"].items():
            if server.get("command") != "flowstate":
                continue
            try:
                parse(list(server.get("args", [])))
            except click.UsageError as e:
                wrong.append(f"{block.where}: {name}: {e}")
    assert wrong == []


def test_every_make_target_shown_exists() -> None:
    targets = set(re.findall(r"^([A-Za-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))
    shown = {
        (block.where, target)
        for block in all_blocks()
        if block.lang in SHELL
        for target in re.findall(r"^\s*make\s+([\w-]+)", block.text, re.M)
    }
    assert sorted(s for s in shown if s[1] not in targets) == []


# --- settings, variables, links, length --------------------------------------------------------


def setting_variables() -> set[str]:
    from flowstate.mcp.settings import McpSettings

    found = set()
    for settings in (Neo4jSettings, LocalServerSettings, MemorySettings, McpSettings):
        prefix = settings.model_config.get("env_prefix", "")
        # A field excluded from the dump is set by a command's option, never read back.
        found |= {
            f"{prefix}{name}".upper()
            for name, field in settings.model_fields.items()
            if not field.exclude
        }
    for command in command_tree().values():
        for param in command.params:
            envvar = getattr(param, "envvar", None)
            if isinstance(envvar, str) and envvar.startswith("FLOWSTATE_"):
                found.add(envvar)
    return found


def test_every_setting_is_in_the_configuration_chapter() -> None:
    text = CONFIG_DOC.read_text()
    missing = sorted(v for v in setting_variables() if f"`{v}`" not in text)
    assert missing == []


def test_every_variable_the_docs_name_exists() -> None:
    sources = [
        *ROOT.glob("flowstate/**/*.py"),
        *ROOT.glob("bench/flowstate_bench/**/*.py"),
        *ROOT.glob("tests/**/*.py"),
        ROOT / ".ci" / "run",
    ]
    known = setting_variables() | {
        v for f in sources for v in re.findall(r"FLOWSTATE_[A-Z0-9_]+", f.read_text())
    }
    named = {
        (path.relative_to(ROOT).as_posix(), v)
        for path in markdown_files()
        for v in re.findall(r"FLOWSTATE_[A-Z0-9_]*[A-Z0-9]", path.read_text())
    }
    assert sorted(n for n in named if n[1] not in known) == []


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors of a Markdown file."""
    found = set()
    for heading in re.findall(r"^#{1,6}\s+(.*?)\s*$", prose(path), flags=re.M):
        text = re.sub(r"[`*_]|<[^>]+>", "", heading).strip().lower()
        found.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return found


def test_every_relative_link_leads_somewhere() -> None:
    broken = []
    for path in markdown_files():
        for target in re.findall(r"\]\(([^)\s]+)\)", prose(path)):
            if re.match(r"^[a-z]+:", target):
                continue  # https:, mailto:
            file_part, _, anchor = target.partition("#")
            goal = (path.parent / file_part).resolve() if file_part else path
            name = goal.relative_to(ROOT).as_posix() if goal.is_relative_to(ROOT) else str(goal)
            if name in COMING:
                continue
            if not goal.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
            elif anchor and goal.suffix == ".md" and anchor not in anchors(goal):
                broken.append(f"{path.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_readme_is_short() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; at most {README_MAX_LINES}"


# --- Python blocks -------------------------------------------------------------------------


@dataclass
class Chain:
    """Blocks run one after another with the same names: the first, then its `continue`s."""

    blocks: list[Block] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.blocks[0].where


def python_blocks() -> list[Block]:
    return [b for b in all_blocks() if b.lang in PYTHON]


def chains() -> list[Chain]:
    found: list[Chain] = []
    last: dict[Path, Chain] = {}
    for block in python_blocks():
        if block.marker == "skip":
            continue
        if block.marker == "continue" and block.path in last:
            last[block.path].blocks.append(block)
            continue
        chain = Chain([block])
        found.append(chain)
        last[block.path] = chain
    return found


def test_every_python_block_compiles() -> None:
    for block in python_blocks():
        compile(block.text, block.where, "exec")


def test_every_skipped_block_says_why() -> None:
    silent = [b.where for b in python_blocks() if b.marker == "skip" and not b.reason]
    assert silent == []


def test_every_continued_block_follows_one() -> None:
    firsts: dict[Path, Block] = {}
    for block in python_blocks():
        if block.marker == "continue" and block.path not in firsts:
            pytest.fail(f"{block.where}: `docs: continue` with no block before it in the file")
        firsts.setdefault(block.path, block)


NAMESPACE = re.compile(r"""(namespace\s*=\s*)(["'])([A-Za-z0-9][A-Za-z0-9_.\-]*)\2""")


def test_every_print_of_a_runnable_block_says_what_it_prints() -> None:
    """A `#>` comment after each `print(...)` of a block that runs (see tests/cli/doc_outputs.py),
    and none that follows no print."""
    silent, stray = [], []
    for chain in chains():
        for block in chain.blocks:
            found = promises(block.text)
            silent += [
                f"{where(block.path, block.line + c.first)}" for c in found.calls if c.text is None
            ]
            stray += [f"{where(block.path, block.line + n)}" for n in found.stray]
    assert silent == [], "add a `#> what it prints` comment to these prints"
    assert stray == [], "a `#>` comment follows no print here"


PROMISING = """\
print("r1 answered Casa Azul, 120 EUR a night")   #> r1 answered Casa Azul, ...
print("r2.o1 ok")   #> r1.o1 ok
print("trips_1234 []")   #> trips []
if False:
    print("never")   #> never
print("r1.a1 False")   #> r1.a1 True
for n in (1, 2):
    print(f"r{n}: step")
    #> r1: step
    #> ...
"""


@pytest.mark.parametrize(
    ("fresh", "renamed", "wrong"),
    [
        (True, {"trips": "trips_1234"}, [2, 5, 6]),
        (True, {}, [2, 3, 5, 6]),
        (False, {"trips": "trips_1234"}, [5, 6]),
    ],
)
def test_a_print_unlike_its_promise_is_named(
    fresh: bool, renamed: dict[str, str], wrong: list[int]
) -> None:
    """`#>` lines, `...`, the renamed namespaces and, on a later run (fresh=False), any
    request id, as the docs test reads them: a print that never ran or printed otherwise is
    named by its line."""
    block = Block(README, 10, "python", PROMISING)
    said = _run_chain(Chain([block]), lambda m: m[0], fresh=fresh, renamed=renamed)
    assert [int(s.split(":")[1]) - 10 for s in said] == wrong, said
    assert all("promised" in s for s in said)


@pytest.mark.neo4j
@pytest.mark.parametrize("chain", chains(), ids=lambda c: c.id)
def test_python_block_runs_twice_and_prints_what_it_promises(
    chain: Chain,
    neo4j_settings: Neo4jSettings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Each chain runs as a reader would run it: twice in a row in the same namespaces, each
    run in a fresh interpreter's names (a script run again), with no FLOWSTATE_* variable set.
    The first run is in new namespaces, where every print shows what its `#>` promises; the
    second shows the same with any request ids."""
    import flowstate.api
    import flowstate.async_api
    from flowstate.llm import scripted
    from flowstate.store import Repository, Store

    connection_settings = flowstate.api.connection_settings

    def to_the_test_server(*args: object) -> Neo4jSettings:
        wanted = connection_settings(*args)  # type: ignore[arg-type]
        if wanted.uri != DEFAULT_URI:
            return wanted
        return wanted.model_copy(
            update={
                "uri": neo4j_settings.uri,
                "user": neo4j_settings.user,
                "password": neo4j_settings.password,
            }
        )

    monkeypatch.setattr(flowstate.api, "connection_settings", to_the_test_server)
    monkeypatch.setattr(flowstate.async_api, "connection_settings", to_the_test_server)
    monkeypatch.chdir(tmp_path)
    for variable in [name for name in os.environ if name.startswith("FLOWSTATE_")]:
        monkeypatch.delenv(variable)
    suffix = uuid.uuid4().hex[:8]
    renamed: dict[str, str] = {}

    def own(m: re.Match[str]) -> str:
        renamed[m[3]] = f"{m[3]}_{suffix}"
        return f"{m[1]}{m[2]}{renamed[m[3]]}{m[2]}"

    try:
        for run in (1, 2):
            registered = set(scripted.registered())
            try:
                wrong = _run_chain(chain, own, fresh=run == 1, renamed=renamed)
            finally:
                for name in set(scripted.registered()) - registered:
                    scripted.unregister(name)  # a script's names end with its process
            assert wrong == [], f"run {run} of {chain.id} in the same namespaces"
    finally:
        with Store.connect(neo4j_settings) as store:
            for name in renamed.values():
                Repository(store, name).forget_namespace(force=True)


def _run_chain(
    chain: Chain,
    own: Callable[[re.Match[str]], str],
    *,
    fresh: bool,
    renamed: dict[str, str],
) -> list[str]:
    """Run the chain's blocks with fresh names; what was printed unlike its promise."""
    names: dict[str, object] = {"__name__": "__docs__"}
    wrong = []
    for block in chain.blocks:
        printed = Printed(block.where)
        names["print"] = printed
        exec(compile(NAMESPACE.sub(own, block.text), block.where, "exec"), names)
        for call in promises(block.text).calls:
            said = printed.of(call)
            at = where(block.path, block.line + call.first)
            if call.text is None:
                continue  # test_every_print_of_a_runnable_block_says_what_it_prints
            if said is None:
                wrong.append(f"{at}: printed nothing; promised {call.text!r}")
            elif not matches(call.text, said, fresh=fresh, renamed=renamed):
                wrong.append(f"{at}: printed {said!r}; promised {call.text!r}")
    return wrong


# --- figures ----------------------------------------------------------------------------------


def demo_table() -> dict[str, tuple[int, ...]]:
    """The demo's table in docs/performance.md: request -> (FlowState calls, plain calls,
    FlowState tokens, plain agent tokens)."""
    text = (DOCS / "performance.md").read_text()
    section = text[text.index("### The demo") :]
    rows = re.findall(
        r"^\| (r\d+|total) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \| ([\d,]+) \| [\d.]+x \|$",
        section,
        re.M,
    )
    return {r[0]: tuple(int(n.replace(",", "")) for n in r[1:]) for r in rows}


@pytest.mark.neo4j
def test_the_demo_figures_are_what_the_demo_prints(
    cli,  # noqa: ANN001
    namespace: str,
    neo4j_settings: Neo4jSettings,
) -> None:
    """The demo is deterministic (scripted models, one tokenizer): the table and the figures
    docs/performance.md and the README give for it are what it prints today."""
    from flowstate.store import Repository, Store

    done = cli("demo", "-N", namespace, "--json")
    with Store.connect(neo4j_settings) as store:
        Repository(store, namespace).forget_namespace(force=True)
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    rows, totals = report["requests"], report["totals"]

    def bills(fs: dict[str, int], plain: dict[str, int]) -> tuple[int, ...]:
        return (fs["calls"], plain["calls"], fs["tokens"], plain["tokens"])

    printed = {r["request_id"]: bills(r["flowstate"], r["plain"]) for r in rows}
    printed["total"] = bills(totals["flowstate"], totals["plain"])
    assert demo_table() == printed
    fs, plain = totals["flowstate"], totals["plain"]
    said = [
        f"{totals['ratio']:.2f}x the plain agent's",
        f"{fs['prompt_tokens']:,} prompt and {fs['completion_tokens']:,} completion tokens",
        f"{plain['prompt_tokens']:,} and {plain['completion_tokens']:,}",
        f"{totals['ratio_cached_at_10%']:.2f}x with cached input at 10%",
        f"{totals['ratio_cached_at_50%']:.2f}x at 50%",
        f"precision {totals['prefetch']['precision']:.0%}, recall "
        f"{totals['prefetch']['recall']:.0%}",
        f"first request {totals['first_request_ratio']:.2f}x",
    ]
    for doc in (DOCS / "performance.md", DOCS.parent / "README.md"):
        text = " ".join(doc.read_text().split())
        assert [s for s in said[:1] if s not in text] == [], doc.name
    text = " ".join((DOCS / "performance.md").read_text().split())
    assert [s for s in said if s not in text] == []
