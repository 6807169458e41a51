"""Offline validation of every rendered manifest: Hera's models keep every key, the project's lint is
clean, ASL passes statelint, and (when the reference schemas are present) Argo's CRD schema accepts it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import hera.workflows.models as m
import pytest
import yaml
from statelint.config import Config
from statelint.linter import Linter

from alas_argo.engines.argo import to_argo
from alas_argo.engines.asl import to_asl
from alas_argo.engines.lint import lint_argo
from alas_argo.engines.rendering import repo_root
from tests.argo_schemas import SKIP_REASON, argo_schema_dir, argo_validator
from tests.engines.samples import kitchen_sink

ROOT = repo_root()
ARGO = sorted((ROOT / "workflows" / "argo").glob("*.yaml"))
ASL = sorted((ROOT / "workflows" / "asl").glob("*.json"))


def _manifests() -> list[tuple[str, dict[str, Any]]]:
    out = [(p.name, yaml.safe_load(p.read_text())) for p in ARGO]
    out.append(("kitchen-sink.workflow", to_argo(kitchen_sink(), image="alas:test", namespace="alas")))
    return out


MANIFESTS = _manifests()


def test_goldens_exist() -> None:
    assert [p.name for p in ARGO] == ["alas-bench.yaml", "alas-plan.yaml", "alas-repair.yaml"]
    assert len(ASL) == 3


@pytest.mark.parametrize(("name", "doc"), MANIFESTS, ids=[n for n, _ in MANIFESTS])
def test_hera_models_keep_every_key(name: str, doc: dict[str, Any]) -> None:
    model = m.WorkflowTemplate if doc["kind"] == "WorkflowTemplate" else m.Workflow
    again = model.model_validate(copy.deepcopy(doc)).model_dump(by_alias=True, exclude_none=True, mode="json")
    assert again == doc


@pytest.mark.parametrize(("name", "doc"), MANIFESTS, ids=[n for n, _ in MANIFESTS])
def test_project_lint_is_clean(name: str, doc: dict[str, Any]) -> None:
    assert lint_argo(doc) == []


def test_lint_finds_broken_references() -> None:
    doc = copy.deepcopy(dict(MANIFESTS)["alas-plan.yaml"])
    spec = doc["spec"]
    spec["onExit"] = "nowhere"
    main = next(t for t in spec["templates"] if t["name"] == "main")
    merge = next(t for t in main["dag"]["tasks"] if t["name"] == "merge")
    merge["depends"] = "ghost"
    check = next(t for t in main["dag"]["tasks"] if t["name"] == "check-plan")
    check["depends"] = "blueprint"  # it reads merge's output key
    agents = next(t for t in main["dag"]["tasks"] if t["name"] == "propose")
    agents["arguments"]["parameters"][0]["value"] = "{{tasks.blueprint.outputs.parameters.nothing}}"
    leaf = next(t for t in spec["templates"] if t["name"] == "disrupt-1")
    leaf["container"]["args"].append("{{inputs.parameters.undeclared}}")
    leaf["container"]["args"].append("{{workflow.parameters.missing}}")
    problems = "\n".join(str(p) for p in lint_argo(doc))
    for expected in ("onExit 'nowhere'", "unknown task 'ghost'", "no output parameter 'nothing'",
                     "undeclared input parameter 'inputs.parameters.undeclared'",
                     "undeclared workflow parameter 'workflow.parameters.missing'",
                     "reads outputs of task 'merge' without depending on it"):
        assert expected in problems, expected


@pytest.mark.parametrize("path", ASL, ids=[p.name for p in ASL])
def test_statelint_accepts_the_asl(path: Path) -> None:
    assert Linter.validate(path.read_text(), Config([], False, False)) == []


def test_statelint_accepts_the_kitchen_sink_and_rejects_a_broken_machine() -> None:
    doc = to_asl(kitchen_sink())
    assert Linter.validate(json.dumps(doc), Config([], False, False)) == []
    doc["States"]["blueprint"]["Next"] = "nowhere"
    assert Linter.validate(json.dumps(doc), Config([], False, False))


@pytest.mark.skipif(argo_schema_dir() is None, reason=SKIP_REASON)
@pytest.mark.parametrize(("name", "doc"), MANIFESTS, ids=[n for n, _ in MANIFESTS])
def test_argo_crd_schema_accepts_the_manifest(name: str, doc: dict[str, Any]) -> None:
    errors = sorted(argo_validator(doc["kind"]).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{'/'.join(map(str, e.path))}: {e.message}" for e in errors[:5]]


@pytest.mark.skipif(argo_schema_dir() is None, reason=SKIP_REASON)
def test_argo_crd_schema_rejects_a_typo() -> None:
    doc = copy.deepcopy(dict(MANIFESTS)["alas-plan.yaml"])
    leaf = next(t for t in doc["spec"]["templates"] if t["name"] == "blueprint")
    leaf["retryStrategy"]["limt"] = leaf["retryStrategy"].pop("limit")
    assert list(argo_validator("WorkflowTemplate").iter_errors(doc))


def test_lint_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from alas_argo.cli import main

    assert main(["engines", "lint", *map(str, ARGO), *map(str, ASL)]) == 0
    assert "6 files clean" in capsys.readouterr().out
    broken = yaml.safe_load(ARGO[0].read_text())
    broken["spec"]["entrypoint"] = "nope"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    assert main(["engines", "lint", str(path)]) == 1
    assert "entrypoint 'nope' is not a template" in capsys.readouterr().out
    assert main(["engines", "lint", "--json", str(path), str(ASL[0])]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["with_problems"] == 1 and [f["path"] for f in report["files"]] == [str(path), str(ASL[0])]
    assert any("entrypoint 'nope' is not a template" in p for p in report["files"][0]["problems"])
    assert report["files"][1]["problems"] == []
    assert main(["engines", "lint", "--json", *map(str, ASL)]) == 0
    assert json.loads(capsys.readouterr().out)["with_problems"] == 0
