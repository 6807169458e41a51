"""The cases of ``operator/resources.py`` that mutation testing found unasserted: what ``Resource.from_object``
reads from an object whose metadata lacks fields. It runs outside the per-object ``try`` of a reconcile pass,
so an object it cannot read would end the whole pass for every other PlanRun and Disruption."""

from __future__ import annotations

from typing import Any

import pytest

from alas_argo.operator import OperatorConfig, Resource, reconcile_planrun
from alas_argo.operator.actions import CreateWorkflow


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
