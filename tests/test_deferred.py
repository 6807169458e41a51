"""Deferred modules: imported on the first read of one of their names, once, also when threads race to it."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from alas_argo.deferred import deferred

# A module whose import is slow and counts how often its body ran (in a file, so each test imports it afresh).
_SLOW_MODULE = """
import time
import builtins
builtins.__dict__.setdefault("_deferred_runs", []).append(__name__)
time.sleep(0.2)  # long enough for every thread below to ask for it while it is still importing
VALUE = 42
"""


@pytest.fixture
def slow_module(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    name = f"_deferred_probe_{request.node.name.replace('[', '_').replace(']', '_')}"
    (tmp_path / f"{name}.py").write_text(_SLOW_MODULE)
    # Forget the imports an earlier run of this test in the same process counted (mutmut runs the suite twice
    # in one process before it tests any mutant), so each run counts only its own.
    import builtins
    runs = builtins.__dict__.setdefault("_deferred_runs", [])
    runs[:] = [r for r in runs if r != name]
    sys.path.insert(0, str(tmp_path))
    yield name
    sys.path.remove(str(tmp_path))
    sys.modules.pop(name, None)


def _runs(name: str) -> int:
    import builtins
    return list(getattr(builtins, "_deferred_runs", [])).count(name)


def test_nothing_is_imported_until_a_name_is_read(slow_module: str) -> None:
    module = deferred(slow_module)
    assert slow_module not in sys.modules and _runs(slow_module) == 0
    assert repr(module) == f"<deferred module {slow_module!r}>"
    assert module.VALUE == 42
    assert slow_module in sys.modules and _runs(slow_module) == 1
    assert module.VALUE == 42 and _runs(slow_module) == 1


def test_an_imported_module_is_returned_as_it_is(slow_module: str) -> None:
    real = __import__(slow_module)
    assert deferred(slow_module) is real


def test_a_missing_name_raises_attribute_error(slow_module: str) -> None:
    with pytest.raises(AttributeError):
        _ = deferred(slow_module).NOT_THERE


def test_threads_reading_at_once_import_the_module_once_and_all_see_it(slow_module: str) -> None:
    module = deferred(slow_module)
    seen: list[object] = []
    barrier = threading.Barrier(8)

    def read() -> None:
        barrier.wait()
        seen.append(module.VALUE)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [42] * 8
    assert _runs(slow_module) == 1
