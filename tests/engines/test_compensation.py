"""Argo compensations are wired to run: ``spec.onExit`` names the handler, the handler runs ``alas step
compensate`` only when the workflow did not succeed, and reading a document back claims a compensation only
when that handler is the one Argo will run."""

from __future__ import annotations

import copy
import json

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import read_native
from tests.engines.samples import kitchen_sink


def test_on_exit_runs_the_compensations_when_the_workflow_did_not_succeed() -> None:
    wf = kitchen_sink()
    spec = to_argo(wf, image="alas:test")["spec"]
    templates = {t["name"]: t for t in spec["templates"]}
    handler = templates[spec["onExit"]]
    [task] = handler["dag"]["tasks"]
    assert task["when"] == "{{workflow.status}} != Succeeded"
    args = templates[task["template"]]["container"]["args"]
    assert args[:2] == ["step", "compensate"]
    assert args[args.index("--status") + 1] == "{{workflow.status}}"
    passed = {p["name"]: p["value"] for p in task["arguments"]["parameters"]}
    comps = json.loads(passed["compensations"])
    assert {k: v["node"] for k, v in comps.items()} == {
        n.id: n.compensation for n in wf.nodes if n.compensation is not None} == {
        "commit": "uncommit", "publish": "unpublish"}


def test_a_handler_argo_would_not_run_compensates_nothing() -> None:
    doc = to_argo(kitchen_sink(), image="alas:test")
    native = {n["id"]: n for n in read_native(doc)["nodes"]}
    assert native["commit"]["compensation"] == "uncommit" and native["publish"]["compensation"] == "unpublish"
    unhooked = copy.deepcopy(doc)
    del unhooked["spec"]["onExit"]  # the handler template is still there, but nothing runs it
    native = {n["id"]: n for n in read_native(unhooked)["nodes"]}
    assert "compensation" not in native["commit"] and "compensation" not in native["publish"]
