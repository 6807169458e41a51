"""The cases of ``operator/manifests.py`` that mutation testing found unasserted.

A Workflow's name is the operator's only memory of what it submitted: a retried pass must compute the very
same name (and get AlreadyExists) for the same generation, also after the operator is upgraded, so the name of
a long PlanRun is pinned exactly here, not only its length. Argo needs the name to be a valid DNS-1123
subdomain (each dot-separated part starting and ending with a letter or digit) of at most 63 characters, so a
cut that ends in ``-`` or ``.`` must be trimmed. The owner reference is what makes Kubernetes garbage-collect a
deleted PlanRun's Workflows: ``apiVersion``, ``kind``, ``name`` and ``uid`` are all required by the API server.
"""

from __future__ import annotations

import hashlib
import re

import pytest

from alas_argo.operator import PLANRUN_LABEL, OperatorConfig, PlanRunSpec, Resource, workflow_manifest, workflow_name
from alas_argo.operator.manifests import label_value, run_id
from alas_argo.operator.resources import API_VERSION

#: A DNS-1123 subdomain, the form of a Workflow's name (Argo further bounds it to 63 characters).
SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def planrun(name: str, generation: int = 1) -> Resource:
    return Resource(name=name, namespace="alas", uid="uid-7", generation=generation, spec={"instance": "ft06"})


def test_a_name_that_just_fits_is_used_as_is() -> None:
    """63 characters are allowed: a name of exactly 63 is kept, not hashed (the boundary of the cut)."""
    name = "p" * 60
    assert workflow_name(planrun(name)) == name + "-g1"
    assert len(name + "-g1") == 63
    assert workflow_name(planrun("p" * 61)) != "p" * 61 + "-g1"  # 64: cut
    assert label_value("q" * 63) == "q" * 63


def test_a_long_name_is_cut_to_exactly_63_with_the_hash_of_the_whole_name() -> None:
    """The cut keeps as much of the name as fits beside an 8-digit hash of the whole name and the generation."""
    name = "a" * 70 + "x"
    assert workflow_name(planrun(name, generation=12)) == "a" * 50 + f"-{digest(name)}-g12"
    assert len(workflow_name(planrun(name, generation=12))) == 63
    assert run_id(planrun(name, generation=12)) == f"alas.{'a' * 50}-{digest(name)}-g12"


@pytest.mark.parametrize("tail", ["-.", ".-", "..", "--"])
def test_a_cut_ending_in_a_dash_or_dot_is_trimmed_so_the_name_stays_a_subdomain(tail: str) -> None:
    """Generation 1 keeps 51 characters; here they end in ``tail``: ``a.-<hash>`` would not be a valid name
    (a part of a subdomain cannot end in ``.`` or begin with ``-``), so the dashes and dots at the cut go."""
    name = "a" * 49 + tail + "b" * 30
    got = workflow_name(planrun(name))
    assert got == "a" * 49 + f"-{digest(name)}-g1"
    assert SUBDOMAIN.match(got), got


def test_a_long_label_value_keeps_a_hash_so_long_names_stay_distinct() -> None:
    """Two PlanRuns whose names share their first 54 characters get different label values, each exactly 63
    characters: the kept 54 and an 8-digit hash of the whole name."""
    a, b = "n" * 70 + "1", "n" * 70 + "2"
    assert label_value(a) == "n" * 54 + f"-{digest(a)}"
    assert label_value(b) == "n" * 54 + f"-{digest(b)}"
    assert label_value(a) != label_value(b) and len(label_value(a)) == 63


def test_a_long_label_value_cut_at_a_dash_or_dot_is_trimmed() -> None:
    """Like a workflow name, the kept part loses the dashes and dots at the cut (no ``.-`` before the hash)."""
    name = "m" * 52 + ".-" + "z" * 20
    assert label_value(name) == "m" * 52 + f"-{digest(name)}"


def test_the_metadata_labels_and_owner_reference_are_complete() -> None:
    """Every field of the owner reference the API server requires (and ``blockOwnerDeletion``, so a PlanRun
    deleted in the foreground waits for its Workflows), and both labels, with their exact names."""
    resource = planrun("ta01", generation=3)
    spec = PlanRunSpec.model_validate(resource.spec)
    meta = workflow_manifest(resource, spec, OperatorConfig())["metadata"]
    assert meta["name"] == "ta01-g3" and meta["namespace"] == "alas"
    assert meta["labels"] == {PLANRUN_LABEL: "ta01", "app.kubernetes.io/managed-by": "alas-operator"}
    assert meta["ownerReferences"] == [{"apiVersion": API_VERSION, "kind": "PlanRun", "name": "ta01",
                                        "uid": "uid-7", "controller": True, "blockOwnerDeletion": True}]
