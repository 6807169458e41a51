"""Argo's own validation (the pinned `argo` CLI, `argo lint --offline`: validate.ValidateWorkflow /
ValidateWorkflowTemplate of v3.6.5) on the rendered `alas-plan`: its gates and enum are valid, a default outside
the enum is refused, and a submitted `disruptions` outside it is refused only when the submitted parameter
carries the enum (what `alas submit` sends), not as a bare `-p` value: the behaviour the walk mirrors. Skips,
saying so, without the CLI (ALAS_ARGO, or the cluster cache scripts/cluster fills)."""

from __future__ import annotations

import copy
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo.engines.submitting import as_submission
from alas_argo.workflows.plan import MAX_DISRUPTIONS

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "workflows" / "argo" / "alas-plan.yaml"


def _argo() -> str | None:
    if os.environ.get("ALAS_ARGO"):
        return os.environ["ALAS_ARGO"]
    pinned = next((line.split("=", 1)[1].split("#")[0].strip() for line in
                   (ROOT / "scripts" / "cluster.d" / "versions.env").read_text().splitlines()
                   if line.startswith("ARGO_VERSION=")), None)
    cache = Path(os.environ.get("ALAS_CLUSTER_CACHE") or Path.home() / ".cache" / "alas-cluster")
    cli = cache / "bin" / f"argo-{pinned}" / "argo"
    return str(cli) if pinned and cli.is_file() and os.access(cli, os.X_OK) else None


ARGO = _argo()
pytestmark = pytest.mark.skipif(ARGO is None, reason="no argo CLI: set ALAS_ARGO or fill the cluster cache "
                                "(scripts/cluster)")


def _template() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(GOLDEN.read_text())
    return doc


def _lint(tmp_path: Path, *docs: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    paths = []
    for i, doc in enumerate(docs):
        path = tmp_path / f"{i}.yaml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        paths.append(str(path))
    assert ARGO is not None
    return subprocess.run([ARGO, "lint", "--offline", "--no-color", *paths], capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.mark.parametrize("name", ["alas-plan", "alas-repair", "alas-bench"])
def test_every_rendered_template_is_valid_as_the_pinned_argo_reads_it(tmp_path: Path, name: str) -> None:
    # Strict decoding: a field the pinned version lacks (e.g. v3.7's `retryStrategy.backoff.cap`, which the
    # v3.6.5 controller silently drops) fails here, not on a cluster that ignores it.
    done = _lint(tmp_path, yaml.safe_load((GOLDEN.parent / f"{name}.yaml").read_text()))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_default_outside_the_enum_is_refused(tmp_path: Path) -> None:
    doc = _template()
    for p in doc["spec"]["arguments"]["parameters"]:
        if p["name"] == "disruptions":
            p["value"] = str(MAX_DISRUPTIONS + 1)
    done = _lint(tmp_path, doc)
    assert done.returncode != 0
    assert "spec.arguments.disruptions.value should be present in spec.arguments.disruptions.enum list" in \
        done.stdout + done.stderr


def test_a_submitted_value_is_checked_against_the_enum_only_when_it_carries_it(tmp_path: Path) -> None:
    template = _template()
    template["metadata"]["namespace"] = "alas"  # where the submissions go (the chart installs it there)
    carried = as_submission(template, {"run-id": "v", "disruptions": str(MAX_DISRUPTIONS + 1)}, namespace="alas")
    refused = _lint(tmp_path, template, carried)
    assert refused.returncode != 0
    assert "spec.arguments.disruptions.value should be present" in refused.stdout + refused.stderr
    bare = copy.deepcopy(carried)
    bare["spec"]["arguments"]["parameters"] = [{"name": "disruptions", "value": str(MAX_DISRUPTIONS + 1)}]
    accepted = _lint(tmp_path, template, bare)  # what `argo submit -p disruptions=4` builds: no enum on it
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    fine = as_submission(template, {"run-id": "v", "disruptions": str(MAX_DISRUPTIONS)}, namespace="alas")
    assert _lint(tmp_path, template, fine).returncode == 0
