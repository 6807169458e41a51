"""Every container the Argo compiler writes runs a command the CLI accepts, and refers only to parameters that
exist: the round trip cannot see this (annotations restore what the commands lose), the goldens only for the
node kinds they happen to contain."""

from __future__ import annotations

import re
from typing import Any

import pytest

from alas_argo.cli import build_parser
from alas_argo.engines.argo import to_argo
from alas_argo.engines.lint import lint_argo
from alas_argo.ir import Workflow
from tests.engines.samples import kitchen_sink, minimal

_EXPR = re.compile(r"\{\{([^}]*)\}\}")


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in doc["spec"]["templates"] if "container" in t]


@pytest.mark.parametrize("build", [kitchen_sink, minimal], ids=["kitchen_sink", "minimal"])
def test_every_container_runs_a_step_the_cli_accepts(build: Any) -> None:
    wf: Workflow = build()
    doc = to_argo(wf, image="alas:test")
    assert lint_argo(doc) == []
    parser = build_parser()
    kinds = set()
    for t in _containers(doc):
        args = t["container"]["args"]
        assert args[0] == "step", t["name"]
        try:
            ns = parser.parse_args(args)
        except SystemExit:
            pytest.fail(f"template {t['name']}: `alas {' '.join(args)}` is refused by the CLI")
        assert (ns.command, ns.kind) == ("step", args[1])
        kinds.add(args[1])
    if build is kitchen_sink:  # a choice, a parallel join, maps and the compensation handler, at least
        assert {"choose", "gather", "job-agent", "compensate"} <= kinds


@pytest.mark.parametrize("build", [kitchen_sink, minimal], ids=["kitchen_sink", "minimal"])
def test_commands_refer_only_to_parameters_that_exist(build: Any) -> None:
    doc = to_argo(build(), image="alas:test")
    workflow_params = {p["name"] for p in doc["spec"].get("arguments", {}).get("parameters", [])}
    for t in _containers(doc):
        declared = {p["name"] for p in (t.get("inputs") or {}).get("parameters", [])}
        for expr in _EXPR.findall(" ".join(t["container"]["args"])):
            if expr.startswith("inputs.parameters."):
                assert expr.removeprefix("inputs.parameters.") in declared, (t["name"], expr)
            elif expr.startswith("workflow.parameters."):
                assert expr.removeprefix("workflow.parameters.") in workflow_params, (t["name"], expr)
            else:
                assert expr in ("workflow.name", "workflow.status"), (t["name"], expr)
