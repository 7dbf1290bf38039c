"""Package attributes imported on first use (PEP 562).

A package whose `__init__` imports its whole public API makes every submodule import pay for
it: `flowstate.cli.common` would pull in the Neo4j driver (about a second) just to print
`--help`. A package that uses this imports nothing until a name is asked for.

>>> __getattr__, __dir__ = lazy_exports("pkg", {"dumps": "json", "loads": "json"})
>>> __getattr__("dumps")({"a": 1})
'{"a": 1}'
>>> __dir__()
['dumps', 'loads']
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose name N is `exports[N]`'s attribute N.

    A name resolved once is stored in the package's namespace, so it costs one lookup.
    """

    def __getattr__(name: str) -> Any:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), name)
        namespace = sys.modules.get(package)
        if namespace is not None:
            setattr(namespace, name, value)
        return value

    def __dir__() -> list[str]:
        namespace = sys.modules.get(package)
        return sorted({*exports, *(vars(namespace) if namespace is not None else ())})

    return __getattr__, __dir__
