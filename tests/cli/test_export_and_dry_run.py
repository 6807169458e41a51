"""`alas ir export NAME` gives IR documents `alas ir validate` accepts; `alas submit --dry-run` prints YAML
(JSON with --json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from alas_argo.cli import main
from alas_argo.engines.rendering import load_definitions

NAMES = sorted(load_definitions())
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", NAMES)
def test_every_shipped_workflow_exports_and_validates(name: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ir", "export", name]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == load_definitions()[name]().to_json() and doc["name"] == name
    for fmt in ("json", "yaml"):
        out = tmp_path / f"{name}.{fmt}"
        assert main(["ir", "export", name, "--format", fmt, "--out", str(out)]) == 0
        assert main(["ir", "validate", str(out), "--require-output-contracts"]) == 0
        assert "valid workflow" in capsys.readouterr().out
    assert yaml.safe_load((tmp_path / f"{name}.yaml").read_text()) == doc


def test_an_unknown_workflow_names_the_shipped_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ir", "export", "alas-nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown workflow 'alas-nope'" in err and all(n in err for n in NAMES)


def test_submit_dry_run_prints_yaml_and_json_on_request(capsys: pytest.CaptureFixture[str]) -> None:
    # A fixed run id: the default is stamped to the second, and the two calls may straddle one.
    argv = ["submit", "alas-plan", "-p", "instance=ft06", "-p", "run-id=dry-1", "--dry-run", "--namespace", "argo"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n")
    as_yaml = yaml.safe_load(text)
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == as_yaml
    params = {p["name"]: p.get("value") for p in as_yaml["spec"]["arguments"]["parameters"]}
    assert params["instance"] == "ft06"


@pytest.mark.parametrize(("argv", "needle"), [
    # Each used to be submitted and fail in a pod: the plan's first step, or every case pod of the bench.
    (["alas-plan", "-p", "instance=nope99"], "unknown instance 'nope99'"),
    (["alas-plan", "-p", 'scenarios=["flood"]'], "unknown scenario 'flood'"),
    (["alas-plan", "-p", "time-limit=soon"], "'time-limit' must be a number, got 'soon'"),
    (["alas-plan", "-p", "disruptions=7"], "disruptions must be between 0 and 3"),
    (["alas-repair", "-p", "repair-effort=0"], "'repair-effort': Input should be greater than 0"),
    (["alas-plan", "-p", "repair-first-edit=Tabu"], "'repair-first-edit': Input should be 'redispatch' or 'tabu'"),
    (["alas-bench", "-p", 'seeds=["a"]'], "'seeds' must hold a whole number, got 'a'"),
    (["alas-bench", "-p", "suite=nope"], "parameter suite: unknown suite or instance 'nope'"),
    (["alas-bench", "-p", "suite=ft06,la01,ft06"], "parameter suite: ft06 listed more than once"),  # pods twice
    (["alas-bench", "-p", "seeds=[0, 1, 0]"], "'seeds' lists 0 more than once"),
    (["alas-bench", "-p", 'scenarios=["none", "flood"]'], "unknown scenario 'flood'"),
    # A rendered file is the same workflow: its label names it.
    ([str(ROOT / "workflows" / "argo" / "alas-plan.yaml"), "-p", "instance=nope99"], "unknown instance 'nope99'"),
], ids=lambda a: " ".join(a[-2:]) if isinstance(a, list) else a)
def test_submit_refuses_a_parameter_the_first_step_would(argv: list[str], needle: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", *argv, "--dry-run"]) == 2  # with or without --dry-run: nothing is sent
    err = capsys.readouterr()
    assert needle in err.err and err.out == "" and err.err.count("\n") == 1, err.err


@pytest.mark.parametrize("name", NAMES)
def test_submit_takes_each_shipped_workflow_with_its_defaults(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The check is no stricter than the steps: the templates' own defaults pass, and so does an instance
    given as a path (a file in the pod's image, which only the pod can read)."""
    assert main(["submit", name, "--dry-run"]) == 0
    if name == "alas-plan":
        assert main(["submit", name, "-p", "instance=/data/mine.txt", "--dry-run"]) == 0
    assert capsys.readouterr().err == ""
