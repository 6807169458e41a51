"""Rendering the shipped workflows (alas_argo/engines/rendering.py) at the edges mutation testing found open:
the checkout the package runs from, where ``alas render`` writes by default (a checkout needs both
``pyproject.toml`` and ``workflows/``), a definitions directory given by argument or ``$ALAS_WORKFLOWS_DIR``
(loaded once, siblings importable as ``workflows.<name>``, a second directory replacing the first, a missing
one refused naming it), YAML that keeps non-ASCII text readable, and the files written and compared."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import alas_argo.engines.rendering as rendering

_INIT = ("from alas_argo.ir import Node, Workflow\n"
         "from . import parts\n"  # a sibling, relatively
         "from workflows.names import NAME\n"  # and as workflows.<name>, as the shipped builders do
         "WORKFLOWS = {NAME: lambda: Workflow(name=NAME, nodes=[Node(id=parts.NODE, role='validator')])}\n")


def _definitions(where: Path, name: str) -> Path:
    where.mkdir()
    (where / "__init__.py").write_text(_INIT)
    (where / "parts.py").write_text("NODE = 'only'\n")
    (where / "names.py").write_text(f"NAME = {name!r}\n")
    return where


@pytest.fixture(autouse=True)
def _forget_loaded_definitions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ALAS_WORKFLOWS_DIR", raising=False)
    yield
    for module in [m for m in sys.modules if m == "workflows" or m.startswith("workflows.")]:
        del sys.modules[module]  # the next test loads the shipped definitions again


def test_a_definitions_directory_by_argument_or_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = _definitions(tmp_path / "first", "mine"), _definitions(tmp_path / "second", "yours")
    loaded = rendering.load_definitions(first)
    assert sorted(loaded) == ["mine"] and loaded["mine"]().nodes[0].id == "only"
    assert rendering.load_definitions(str(first)) is loaded  # the same directory is not executed again
    monkeypatch.setenv("ALAS_WORKFLOWS_DIR", str(second))
    # Another directory replaces the first, siblings too: its `workflows.names` was the first one's (cached
    # in sys.modules), so the second directory's workflow came out named "mine".
    assert sorted(rendering.load_definitions()) == ["yours"]
    assert sorted(rendering.load_definitions(first)) == ["mine"]  # an argument wins over the environment
    assert sys.modules["workflows"].__name__ == "workflows"
    monkeypatch.delenv("ALAS_WORKFLOWS_DIR")
    assert sorted(rendering.load_definitions()) == ["alas-bench", "alas-plan", "alas-repair"]
