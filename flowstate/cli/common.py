"""What every command shares: error mapping to exit codes, JSON or human output."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from flowstate.errors import FlowStateError, LocalServerError, UsageError

EXIT_FAILURE = 1
EXIT_USAGE = 2


def fails_cleanly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn FlowState errors into one message on stderr and the documented exit code."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except UsageError as e:
            click.echo(f"Error: {one_line(str(e))}", err=True)
            sys.exit(EXIT_USAGE)
        except LocalServerError as e:
            click.echo(f"Error: {neutralised(str(e))}", err=True)  # keeps the log tail it quotes
            sys.exit(EXIT_FAILURE)
        except FlowStateError as e:
            click.echo(f"Error: {one_line(str(e))}", err=True)
            sys.exit(EXIT_FAILURE)

    return wrapper


def one_line(text: str) -> str:
    return neutralised(" ".join(text.split()))


# Control characters (C0 but newline and tab, DEL, C1) and bidirectional overrides: stored
# content may carry terminal escape sequences that would recolour, retitle or rewrite the
# user's terminal, or reorder what is shown. Human output shows them as visible escapes.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def neutralised(text: str) -> str:
    r"""`text` with control characters shown as escapes, safe to print to a terminal.

    >>> neutralised("red \x1b[31mALERT\x1b[0m\tok\n")
    'red \\x1b[31mALERT\\x1b[0m\tok\n'
    """
    return _CONTROL.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


def emit(data: Any, as_json: bool, human: str) -> None:
    """Print JSON for machines (escaped by the encoder) or neutralised text for people."""
    if as_json:
        text = json.dumps(data, indent=2, default=str, ensure_ascii=False)
        # The encoder escapes C0 controls but not C1 or bidi ones; inside JSON strings (the
        # only place they can be) a \uXXXX escape is valid JSON and harmless to a terminal.
        click.echo(_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text))
    else:
        click.echo(neutralised(human))


def confirm(question: str) -> None:
    """Ask at the terminal; a clear usage error (not a traceback) when nobody can answer."""
    if sys.stdin is None or sys.stdin.closed:
        raise UsageError(f"{question}: standard input is closed, so nobody can confirm; add --yes")
    try:
        agreed = click.confirm(neutralised(question))
    except click.Abort as e:  # end of input (or Ctrl-C) before an answer
        raise UsageError(f"{question}: no answer on standard input; add --yes") from e
    if not agreed:
        raise click.Abort
