"""What every command shares: error mapping to exit codes, JSON or human output."""

from __future__ import annotations

import json
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
            click.echo(f"Error: {e}", err=True)  # keeps the server log tail it quotes
            sys.exit(EXIT_FAILURE)
        except FlowStateError as e:
            click.echo(f"Error: {one_line(str(e))}", err=True)
            sys.exit(EXIT_FAILURE)

    return wrapper


def one_line(text: str) -> str:
    return " ".join(text.split())


def emit(data: Any, as_json: bool, human: str) -> None:
    click.echo(json.dumps(data, indent=2, default=str, ensure_ascii=False) if as_json else human)
