"""Every test here starts a real server: marked `local`, so `-m "not local"` skips the tier."""

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.local)
