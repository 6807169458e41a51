"""The golden files in workflows/ (and the chart's copies) are what `alas render` produces today.

Regenerate them with ``ALAS_UPDATE_GOLDENS=1 python3 -m pytest tests/workflows/test_goldens.py`` (or
``alas render``), and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.engines.rendering import compare_tree, load_definitions, render_all, repo_root, write_tree

ROOT = repo_root()


def test_definitions_are_the_three_workflows() -> None:
    assert sorted(load_definitions()) == ["alas-bench", "alas-plan", "alas-repair"]


def test_goldens_are_fresh() -> None:
    files = render_all(load_definitions())
    templates = {Path(rel).name: text for rel, text in files.items() if rel.startswith("argo/")}
    if os.environ.get("ALAS_UPDATE_GOLDENS") == "1":
        write_tree(files, ROOT / "workflows")
        write_tree(templates, ROOT / "charts/alas/workflows")
    stale = compare_tree(files, ROOT / "workflows")
    assert not stale, f"stale goldens {stale}: run ALAS_UPDATE_GOLDENS=1 pytest {__file__} (or alas render)"
    assert not compare_tree(templates, ROOT / "charts/alas/workflows"), "chart copies are stale: run alas render"


def test_a_stale_golden_is_detected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", "--out", str(tmp_path), "--no-chart"]) == 0
    golden = tmp_path / "argo" / "alas-plan.yaml"
    golden.write_text(golden.read_text().replace("parallelism: 8", "parallelism: 9"))
    assert main(["render", "--out", str(tmp_path), "--no-chart", "--check"]) == 1
    assert "argo/alas-plan.yaml" in capsys.readouterr().err


def test_every_template_runs_a_step_kind_that_exists() -> None:
    """Each container runs `alas step <kind>`; a kind without a handler fails at run time only (the retract
    templates once called one)."""
    import yaml

    from alas_argo.step_handlers import HANDLERS

    for path in sorted((ROOT / "workflows" / "argo").glob("*.yaml")):
        for t in yaml.safe_load(path.read_text())["spec"]["templates"]:
            if "container" in t:
                args = t["container"]["args"]
                assert args[0] == "step" and args[1] in HANDLERS, f"{path.name}: {t['name']} runs {args[:2]}"


def test_every_step_kind_is_one_a_template_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No dead step kinds: every handler is run by a shipped template, or by the compiled IR's choice and parallel
    nodes (which the shipped workflows do not use). The cluster workflow's kinds from before the single
    definition (supervise, controller) are gone, and `alas step` refuses them as unknown."""
    import yaml

    from alas_argo.step_handlers import HANDLERS

    rendered = {t["container"]["args"][1] for path in (ROOT / "workflows" / "argo").glob("*.yaml")
                for t in yaml.safe_load(path.read_text())["spec"]["templates"] if "container" in t}
    assert set(HANDLERS) == rendered | {"choose", "gather"}
    for legacy in ("supervise", "controller"):
        assert main(["step", legacy, "--run-id", "r", "--store", "fs", "--root", str(tmp_path)]) == 2
        assert f"unknown step kind {legacy!r}" in capsys.readouterr().err
