"""The benchmark chapters stay true: every command they show names only options the command
has, and both chapters exist and show a command."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from flowstate_bench.arena.cli import arena
from flowstate_bench.tau.cli import tau

DOCS = Path(__file__).parents[2] / "docs"
COMMANDS: dict[str, click.Command] = {"tau": tau, "arena": arena}


def _commands(text: str) -> list[tuple[str, str]]:
    """(harness, the command's text) of every `flowstate bench tau|arena ...` it shows,
    continuation lines joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return re.findall(r"flowstate bench (tau|arena)\b([^\n`]*)", joined)


def _options(command: click.Command) -> set[str]:
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)}


@pytest.mark.parametrize("doc", ["tau.md", "arena.md"])
def test_every_command_in_the_chapter_has_the_options_it_names(doc: str) -> None:
    shown = _commands((DOCS / doc).read_text(encoding="utf-8"))
    assert shown, f"{doc} shows no command"
    for harness, line in shown:
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line))
        unknown = named - _options(COMMANDS[harness])
        assert not unknown, f"{doc}: flowstate bench {harness}{line}: {sorted(unknown)}"
