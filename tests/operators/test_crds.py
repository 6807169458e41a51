"""The CRDs are valid Kubernetes objects, the chart ships the same ones, and their OpenAPI schemas agree
with the operator's pydantic models on good and bad resources."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from pydantic import BaseModel

from alas_argo.operator import DisruptionSpec, PlanRunSpec

ROOT = Path(__file__).resolve().parents[2]
CRDS = sorted((ROOT / "operators" / "crds").glob("*.yaml"))
EXAMPLES = sorted((ROOT / "operators" / "examples").glob("*.yaml"))
MODELS: dict[str, type[BaseModel]] = {"PlanRun": PlanRunSpec, "Disruption": DisruptionSpec}


def crd(kind: str) -> dict[str, Any]:
    for path in CRDS:
        doc = yaml.safe_load(path.read_text())
        if doc["spec"]["names"]["kind"] == kind:
            return doc
    raise AssertionError(kind)


def spec_schema(kind: str) -> dict[str, Any]:
    return dict(crd(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"])


def strict(schema: Any) -> Any:
    """The schema as the API server applies it under strict field validation (kubectl's default since
    1.27): a field no ``properties`` names is refused, unless the node preserves unknown fields. (Without
    strict validation the server prunes such fields instead; either way they never reach the operator.)"""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    out["properties"] = {k: strict(v) for k, v in (schema.get("properties") or {}).items()}
    if isinstance(schema.get("items"), dict):
        out["items"] = strict(schema["items"])
    if schema.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True  # the API server refuses a repeated item of a set (a structural schema may not
        # say uniqueItems itself)
    if not out["properties"]:
        del out["properties"]
    elif not out.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False  # only the structural part: allOf/oneOf/... name no new fields
    return out


def schema_accepts(kind: str, spec: dict[str, Any]) -> bool:
    # Kubernetes structural schemas are OpenAPI 3.0 (boolean exclusiveMinimum): Draft 4 semantics.
    return jsonschema.Draft4Validator(strict(spec_schema(kind))).is_valid(spec)


def model_accepts(kind: str, spec: dict[str, Any]) -> bool:
    try:
        MODELS[kind].model_validate(spec)
    except ValueError:
        return False
    return True


def test_repair_methods_match_the_repair_package() -> None:
    from typing import get_args

    from alas_argo.jssp.repair import RepairMethod

    method = DisruptionSpec.model_fields["method"].annotation
    assert set(get_args(method)) == {m.value for m in RepairMethod}
    enum = spec_schema("Disruption")["properties"]["method"]["enum"]
    assert set(enum) == {m.value for m in RepairMethod}


def test_scenarios_are_the_ones_the_workflows_take() -> None:
    from typing import get_args

    from alas_argo.jssp.disruption import DisruptionKind

    kinds = {"none", *(k.value for k in DisruptionKind)}
    (item,) = get_args(PlanRunSpec.model_fields["scenarios"].annotation)
    assert set(get_args(item)) == kinds
    assert set(spec_schema("PlanRun")["properties"]["scenarios"]["items"]["enum"]) == kinds


def test_there_are_two_crds() -> None:
    assert [p.name for p in CRDS] == ["disruptions.alas.dev.yaml", "planruns.alas.dev.yaml"]


@pytest.mark.parametrize("path", CRDS, ids=lambda p: p.name)
def test_crd_is_a_valid_kubernetes_object(path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    kubernetes_validate.validate(doc, "1.30", strict=True)
    assert doc["metadata"]["name"] == f"{doc['spec']['names']['plural']}.{doc['spec']['group']}"
    version = doc["spec"]["versions"][0]
    assert version["subresources"] == {"status": {}}  # the operator patches /status only


@pytest.mark.parametrize("path", CRDS, ids=lambda p: p.name)
def test_chart_ships_the_same_crd(path: Path) -> None:
    assert (ROOT / "charts" / "alas" / "crds" / path.name).read_text() == path.read_text()


def test_a_broken_crd_is_rejected() -> None:
    doc = crd("PlanRun")
    doc["spec"]["versions"][0]["served"] = "yes"
    doc["spec"]["colour"] = "red"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(doc, "1.30", strict=True)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_pass_both_validators(path: Path) -> None:
    doc = yaml.safe_load(path.read_text())
    assert schema_accepts(doc["kind"], doc["spec"])
    assert model_accepts(doc["kind"], doc["spec"])


BREAKDOWN = {"kind": "machine_breakdown", "machine": 1, "start": 3, "duration": 4}
CASES = [
    ("PlanRun", {"instance": "ta01"}, True),
    ("PlanRun", {"suite": "smoke", "planner": "llm", "seeds": [0, 1], "parallelism": 2}, True),
    ("PlanRun", {}, False),
    ("PlanRun", {"instance": "ta01", "suite": "smoke"}, False),
    ("PlanRun", {"instance": "ta01", "planner": "oracle"}, False),
    ("PlanRun", {"instance": "ta01", "seeds": []}, False),
    ("PlanRun", {"instance": "ta01", "seeds": [-1]}, False),
    ("PlanRun", {"instance": "ta01", "seeds": [0, 2**31 - 1]}, True),
    ("PlanRun", {"instance": "ta01", "seeds": [2**31]}, False),  # past CP-SAT's 32-bit seed
    ("PlanRun", {"instance": "ta01", "timeLimit": 0}, False),
    ("PlanRun", {"suite": "smoke", "seeds": [0, 1, 0]}, False),  # the same case pods twice
    ("PlanRun", {"suite": "smoke", "scenarios": ["shock", "shock"]}, False),
    ("PlanRun", {"suite": "smoke", "scenarios": ["none", "breakdown", "shock", "mixed"]}, True),
    ("PlanRun", {"suite": "smoke", "scenarios": ["duration"]}, False),  # the old description's example
    ("PlanRun", {"suite": "smoke", "scenarios": ["none", "flood"]}, False),
    ("PlanRun", {"instance": "ta01", "parallelism": 0}, False),
    ("PlanRun", {"instance": "ta01", "extra": 1}, False),
    ("PlanRun", {"instance": ""}, False),
    ("Disruption", {"run": "r1", "time": 0, "events": [BREAKDOWN]}, True),
    ("Disruption", {"run": "r1", "time": 0, "method": "right-shift",
                    "events": [{"kind": "duration_change", "job": 0, "step": 1, "duration": 9}]}, True),
    ("Disruption", {"planRun": "ta01", "time": 0, "events": [BREAKDOWN]}, True),
    ("Disruption", {"run": "r1", "planRun": "ta01", "time": 0, "events": [BREAKDOWN]}, False),
    ("Disruption", {"time": 0, "events": [BREAKDOWN]}, False),
    ("Disruption", {"run": "r1", "time": 0, "events": []}, False),
    ("Disruption", {"run": "r1", "events": [BREAKDOWN]}, False),
    ("Disruption", {"run": "r1", "time": -1, "events": [BREAKDOWN]}, False),
    ("Disruption", {"run": "../x", "time": 0, "events": [BREAKDOWN]}, False),
    ("Disruption", {"run": "r1", "time": 0, "events": [{"kind": "machine_breakdown", "machine": 1}]}, False),
    ("Disruption", {"run": "r1", "time": 0, "events": [{"kind": "meteor"}]}, False),
    ("Disruption", {"run": "r1", "time": 0, "method": "Nope!", "events": [BREAKDOWN]}, False),
]


@pytest.mark.parametrize("kind, spec, ok", CASES)
def test_schema_and_model_agree(kind: str, spec: dict[str, Any], ok: bool) -> None:
    assert schema_accepts(kind, spec) is ok
    assert model_accepts(kind, spec) is ok


@pytest.mark.parametrize(("spec", "message"), [
    ({"instance": "nope99"}, "PlanRun alas/p1: invalid spec: unknown instance 'nope99'"),
    ({"suite": "nope"}, "PlanRun alas/p1: invalid spec: unknown suite or instance 'nope'"),
    ({"instance": "ta01", "suite": "smoke"}, "invalid spec: give exactly one of instance or suite"),
    ({"instance": "ta01", "seeds": "x"}, "invalid spec.seeds: Input should be a valid list"),
    ({"suite": "ft06,nope99"}, "unknown instance 'nope99'"),
    ({"suite": "smoke", "seeds": [3, 1, 3]}, "invalid spec: seeds lists 3 more than once"),
])
def test_a_planrun_naming_no_bundled_instance_or_suite_is_invalid_at_once(spec: dict[str, Any], message: str) -> None:
    """The schema takes any short name; the model looks it up, so the PlanRun turns Invalid naming it instead
    of creating a workflow whose every pod fails on it. A rule over the whole spec is named as such."""
    from alas_argo.operator import OperatorConfig, reconcile_planrun
    from alas_argo.operator.actions import PatchStatus
    from alas_argo.operator.resources import Resource

    assert not model_accepts("PlanRun", spec)
    resource = Resource(name="p1", namespace="alas", uid="u1", spec=spec)
    (patch,) = reconcile_planrun(resource, None, OperatorConfig())
    assert isinstance(patch, PatchStatus)
    status = patch.status
    assert status["phase"] == "Invalid" and message in status["message"], status
