"""`ir.plan.PlanVersion`, the runtime's record of a workflow's versions: its hash covers name, version, parent,
reason and content (each one alone changes it, so no part of a version can be altered unseen), a version
needs a name, a number from 1 and its content, and the first version has no parent and the reason "initial".
Also `IRModel`'s assignment check: a mutable IR model refuses a bad value assigned after it is built."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from alas_argo.ir import PlanVersion, Retry, content_hash

BASE: dict[str, Any] = {"name": "demo", "version": 2, "parent": "p" * 64, "reason": "repair",
                        "content": {"makespan": 9}}


def test_the_hash_is_the_content_hash_of_the_five_fields() -> None:
    assert PlanVersion(**BASE).hash == content_hash(BASE)


@pytest.mark.parametrize(("field", "other"), [("name", "demo2"), ("version", 3), ("parent", "q" * 64),
                                              ("reason", "replan"), ("content", {"makespan": 8})])
def test_each_field_alone_changes_the_hash(field: str, other: object) -> None:
    assert PlanVersion(**{**BASE, field: other}).hash != PlanVersion(**BASE).hash


def test_the_first_version_has_no_parent_and_says_initial() -> None:
    v1 = PlanVersion.first("demo", {"makespan": 10})
    assert (v1.version, v1.parent, v1.reason) == (1, None, "initial")
    assert "parent" not in v1.to_json() and v1.to_json()["reason"] == "initial"


@pytest.mark.parametrize(("fields", "refusal"), [
    ({"name": ""}, "at least 1 character"),
    ({"version": 0}, "greater than or equal to 1"),
])
def test_an_empty_name_or_a_version_below_1_is_refused(fields: dict[str, Any], refusal: str) -> None:
    with pytest.raises(ValidationError, match=refusal):
        PlanVersion(**{**BASE, **fields})


@pytest.mark.parametrize("missing", ["name", "version", "content"])
def test_name_version_and_content_are_required(missing: str) -> None:
    with pytest.raises(ValidationError, match=f"{missing}\n  Field required"):
        PlanVersion(**{k: v for k, v in BASE.items() if k != missing})


def test_a_mutable_ir_model_checks_an_assigned_value() -> None:
    retry = Retry(max_attempts=2)
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        retry.max_attempts = 0
    assert retry.max_attempts == 2
