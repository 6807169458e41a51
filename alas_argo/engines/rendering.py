"""Rendering the workflows users submit: take the IR builders shipped in :mod:`alas_argo.workflows` (or a
directory of other definitions), compile each to an Argo WorkflowTemplate (YAML) and an ASL state machine
(JSON), and write or compare the golden files."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from alas_argo.engines.argo import to_argo
from alas_argo.engines.asl import to_asl
from alas_argo.errors import InputError
from alas_argo.file_names import found
from alas_argo.ir import Workflow

__all__ = ["DEFAULT_IMAGE", "compare_tree", "default_out", "dump_yaml", "load_definitions", "render_all",
           "repo_root", "write_tree"]

#: Image the golden templates name: what the chart's kind flow builds and loads (charts/alas/values.yaml).
DEFAULT_IMAGE = "alas:0.1.0"


def repo_root() -> Path:
    """The source checkout this package runs from (an editable install; meaningless for a wheel)."""
    return Path(__file__).resolve().parents[2]


def default_out() -> Path:
    """Where ``alas render`` writes by default: ``workflows/`` of the checkout when the package runs from one
    (the goldens), else ``workflows/`` under the current directory (a wheel install has no checkout)."""
    root = repo_root()
    if (root / "pyproject.toml").is_file() and (root / "workflows").is_dir():
        return root / "workflows"
    return Path.cwd() / "workflows"


def load_definitions(directory: str | Path | None = None) -> dict[str, Callable[[], Workflow]]:
    """Template name -> IR builder: the shipped definitions (:mod:`alas_argo.workflows`), or the
    ``workflows`` package of IR builders in ``directory`` (or ``$ALAS_WORKFLOWS_DIR``) when one is given.

    Raises:
        InputError: The directory or its ``__init__.py`` is missing.
    """
    chosen = directory or os.environ.get("ALAS_WORKFLOWS_DIR")
    if not chosen:
        from alas_argo.workflows import WORKFLOWS

        return dict(WORKFLOWS)
    root = Path(chosen)
    init = root / "__init__.py"
    if not found(init, file=True):  # found(): a name past the length limit is not found, not a traceback
        raise InputError("workflow definitions not found (an IR builder package with WORKFLOWS in __init__.py)",
                         where=str(root))
    if "workflows" not in sys.modules or Path(str(sys.modules["workflows"].__file__)).resolve() != init.resolve():
        for name in [m for m in sys.modules if m.startswith("workflows.")]:
            del sys.modules[name]  # another directory's siblings must not stand in for this one's
        spec = importlib.util.spec_from_file_location("workflows", init, submodule_search_locations=[str(root)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["workflows"] = module  # the builders import their siblings as workflows.<name>
        spec.loader.exec_module(module)
    builders: dict[str, Callable[[], Workflow]] = sys.modules["workflows"].WORKFLOWS
    return builders


def dump_yaml(doc: Any) -> str:
    """Byte-stable YAML (insertion order, no line wrapping)."""
    text: str = yaml.safe_dump(doc, sort_keys=False, width=10_000, allow_unicode=True)
    return text


def render_all(definitions: dict[str, Callable[[], Workflow]], *, image: str = DEFAULT_IMAGE) -> dict[str, str]:
    """Relative path -> file text: ``argo/<name>.yaml`` (WorkflowTemplate) and ``asl/<name>.asl.json``."""
    files: dict[str, str] = {}
    for name, build in sorted(definitions.items()):
        wf = build()
        files[f"argo/{name}.yaml"] = dump_yaml(to_argo(wf, image=image, kind="WorkflowTemplate"))
        files[f"asl/{name}.asl.json"] = json.dumps(to_asl(wf), indent=2) + "\n"
    return files


def write_tree(files: dict[str, str], out: str | Path) -> list[Path]:
    """Write every file under ``out`` (temp file + rename); return the paths written."""
    written = []
    for rel, text in files.items():
        path = Path(out) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written


def compare_tree(files: dict[str, str], out: str | Path) -> list[str]:
    """Relative paths whose file under ``out`` is missing or differs from the rendering."""
    stale = []
    for rel, text in files.items():
        path = Path(out) / rel
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            stale.append(rel)
    return stale
