"""The cases of ``operator/resources.py`` that mutation testing found unasserted: what ``Resource.from_object``
reads from an object whose metadata lacks fields (it runs outside the per-object ``try`` of a reconcile pass, so
an object it cannot read would end the whole pass for every other PlanRun and Disruption), and, from hand mutants
of what mutmut does not mutate (class-level ``Field`` arguments), that the models' bounds and defaults are the
CRDs': the spec is validated twice on purpose, and the two validators must agree at every limit."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.operator import DisruptionSpec, OperatorConfig, PlanRunSpec, Resource, reconcile_planrun
from alas_argo.operator.actions import CreateWorkflow
from tests.operators.test_crds import model_accepts, schema_accepts, spec_schema


@pytest.mark.parametrize("obj", [{}, {"metadata": None, "spec": None, "status": None},
                                 {"metadata": {}}, {"metadata": {"generation": None}}])
def test_an_object_without_metadata_reads_as_the_defaults(obj: dict[str, Any]) -> None:
    """Guards each default: no name, namespace ``default``, no uid, generation 1, empty spec and status."""
    assert Resource.from_object(obj) == Resource(name="", namespace="default", uid="", generation=1, spec={},
                                                 status={})


def test_a_new_object_without_a_generation_submits_generation_ones_workflow() -> None:
    """A PlanRun read before the API server numbered its generation is generation 1: the workflow it creates
    is ``<name>-g1``, the one the next pass (with ``generation: 1``) finds and does not submit again."""
    resource = Resource.from_object({"metadata": {"name": "ta01", "namespace": "team-b", "uid": "u-1"},
                                     "spec": {"instance": "ta01"}})
    assert (resource.name, resource.namespace, resource.uid, resource.generation) == ("ta01", "team-b", "u-1", 1)
    create = reconcile_planrun(resource, None, OperatorConfig())[0]
    assert isinstance(create, CreateWorkflow) and create.manifest["metadata"]["name"] == "ta01-g1"


def test_what_the_metadata_gives_is_read_as_given() -> None:
    """The other half of the defaults: a field present is never replaced by its default."""
    obj = {"metadata": {"name": "p", "namespace": "alas", "uid": "u", "generation": 7},
           "spec": {"instance": "ft06"}, "status": {"phase": "Running"}}
    assert Resource.from_object(obj) == Resource(name="p", namespace="alas", uid="u", generation=7,
                                                 spec={"instance": "ft06"}, status={"phase": "Running"})


BREAKDOWN = {"kind": "machine_breakdown", "machine": 1, "start": 3, "duration": 4}
#: Distinct bundled instances, 63 characters in all (the CRD's maxLength of ``suite``), and one more character.
SUITE_63 = "la01,la02,la03,la04,la05,la06,la07,la08,orb01,orb02,orb03,orb04"
SUITE_64 = "la01,la02,la03,la04,la05,la06,la07,orb01,orb02,orb03,orb04,orb05"


@pytest.mark.parametrize("kind, spec, ok", [
    ("PlanRun", {"suite": SUITE_63}, True),
    ("PlanRun", {"suite": SUITE_64}, False),
    ("PlanRun", {"instance": "ta01", "seeds": list(range(64))}, True),
    ("PlanRun", {"instance": "ta01", "seeds": list(range(65))}, False),
    ("PlanRun", {"instance": "ta01", "timeLimit": 3600}, True),
    ("PlanRun", {"instance": "ta01", "timeLimit": 3600.5}, False),
    ("PlanRun", {"instance": "ta01", "timeLimit": 0.001}, True),
    ("PlanRun", {"instance": "ta01", "parallelism": 256}, True),
    ("PlanRun", {"instance": "ta01", "parallelism": 257}, False),
    ("PlanRun", {"instance": "ta01", "parallelism": 1}, True),
    ("Disruption", {"run": "r" * 128, "time": 0, "events": [BREAKDOWN]}, True),
    ("Disruption", {"run": "r" * 129, "time": 0, "events": [BREAKDOWN]}, False),
    ("Disruption", {"run": "r1.a_b-c", "time": 0, "events": [BREAKDOWN]}, True),
    ("Disruption", {"run": ".r1", "time": 0, "events": [BREAKDOWN]}, False),
    ("Disruption", {"planRun": "p" * 253, "time": 0, "events": [BREAKDOWN]}, True),
    ("Disruption", {"planRun": "p" * 254, "time": 0, "events": [BREAKDOWN]}, False),
    ("Disruption", {"run": "r1", "time": 0, "events": [BREAKDOWN] * 1000}, True),
    ("Disruption", {"run": "r1", "time": 0, "events": [BREAKDOWN] * 1001}, False),
])
def test_schema_and_model_agree_at_each_limit(kind: str, spec: dict[str, Any], ok: bool) -> None:
    """At each bound of the CRD and one past it, the API server's schema and the reconciler's model agree: a
    looser model would run a spec ``kubectl apply`` refuses (after a hand-edited CRD), a stricter one would turn
    an accepted resource Invalid."""
    assert schema_accepts(kind, spec) is ok
    assert model_accepts(kind, spec) is ok


def test_the_models_defaults_are_the_crds() -> None:
    """The API server fills the CRD's defaults in; a resource it did not default (a CRD edited by hand) gets the
    model's, which must be the same run."""
    planrun = PlanRunSpec.model_validate({"instance": "ta01"}).model_dump(by_alias=True, mode="json")
    disruption = DisruptionSpec.model_validate({"run": "r1", "time": 0, "events": [BREAKDOWN]}).model_dump(
        by_alias=True, mode="json")
    for kind, dumped in (("PlanRun", planrun), ("Disruption", disruption)):
        defaults = {k: v["default"] for k, v in spec_schema(kind)["properties"].items() if "default" in v}
        assert defaults and {k: dumped[k] for k in defaults} == defaults, kind
