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

import alas_argo
import alas_argo.engines.rendering as rendering
from alas_argo.errors import InputError

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


def test_the_root_is_the_checkout_holding_this_package() -> None:
    assert (rendering.repo_root() / "alas_argo" / "__init__.py").resolve() == Path(alas_argo.__file__).resolve()


@pytest.mark.parametrize(("pyproject", "workflows", "checkout"),
                         [(True, True, True), (True, False, False), (False, True, False)])
def test_the_default_out_is_the_checkouts_workflows_only_in_a_checkout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pyproject: bool, workflows: bool, checkout: bool) -> None:
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    if pyproject:
        (root / "pyproject.toml").write_text("")
    if workflows:
        (root / "workflows").mkdir()
    monkeypatch.setattr(rendering, "repo_root", lambda: root)
    monkeypatch.chdir(elsewhere)
    assert rendering.default_out() == (root if checkout else elsewhere) / "workflows"


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


def test_a_directory_without_definitions_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError) as err:
        rendering.load_definitions(tmp_path)
    assert err.value.where == str(tmp_path)
    assert str(err.value) == (f"{tmp_path}: workflow definitions not found "
                              "(an IR builder package with WORKFLOWS in __init__.py)")


def test_a_directory_the_system_cannot_look_up_is_refused_naming_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # ALAS_WORKFLOWS_DIR past the name length limit: Path.is_file() raised OSError, a traceback from `alas render`.
    long = tmp_path / ("x" * 300)
    monkeypatch.setenv("ALAS_WORKFLOWS_DIR", str(long))
    with pytest.raises(InputError) as err:
        rendering.load_definitions()
    assert err.value.where == str(long)
    assert err.value.message == "workflow definitions not found (an IR builder package with WORKFLOWS in __init__.py)"


def test_yaml_keeps_order_and_non_ascii_text_and_long_lines() -> None:
    long = "x" * 200
    text = rendering.dump_yaml({"z": "déjà vu", "a": [long]})
    assert text == f"z: déjà vu\na:\n- {long}\n"


def test_files_are_written_whole_and_compared(tmp_path: Path) -> None:
    files = {"argo/a.yaml": "name: é\n", "asl/b.asl.json": "{}\n"}
    (tmp_path / "asl").mkdir()
    (tmp_path / "asl" / "b.asl.json").write_text("old\n")
    assert rendering.compare_tree(files, tmp_path) == ["argo/a.yaml", "asl/b.asl.json"]  # missing, differs
    assert rendering.write_tree(files, tmp_path) == [tmp_path / "argo/a.yaml", tmp_path / "asl/b.asl.json"]
    assert (tmp_path / "argo/a.yaml").read_bytes() == "name: é\n".encode()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["a.yaml", "b.asl.json"]  # no temp files
    assert rendering.compare_tree(files, tmp_path) == []
    (tmp_path / "argo/a.yaml").unlink()
    (tmp_path / "argo/a.yaml").mkdir()  # a directory where the file goes is no up-to-date file
    assert rendering.compare_tree(files, tmp_path) == ["argo/a.yaml"]


def test_render_all_names_and_formats_every_file() -> None:
    files = rendering.render_all(rendering.load_definitions())
    assert list(files) == [f"{kind}/{name}.{ext}" for name in ("alas-bench", "alas-plan", "alas-repair")
                           for kind, ext in (("argo", "yaml"), ("asl", "asl.json"))]
    assert f"image: {rendering.DEFAULT_IMAGE}" in files["argo/alas-plan.yaml"]
    assert files["asl/alas-plan.asl.json"].startswith('{\n  "') and files["asl/alas-plan.asl.json"].endswith("}\n")
