"""The Instance contract at its edges: each refusal's message and place (the job and step), the machine
numbers' upper bound at both sides, strict bounds (an integer, never a boolean, a float or text), a frozen
model, and the JSON form of an instance without bounds."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from alas_argo.errors import InputError
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.limits import MAX_MACHINES, MAX_TIME


def _refusal(jobs: list[Any]) -> tuple[str, object]:
    with pytest.raises(InputError) as refused:
        Instance(name="bad", jobs=jobs)
    return refused.value.message, refused.value.where


def test_each_refusal_names_the_job_and_step() -> None:
    assert _refusal([]) == ("instance has no jobs", "bad")
    assert _refusal([[(0, 1)], []]) == ("job has no operations", {"job": 1})
    assert _refusal([[(0, 1)], [(1, 2), (-1, 3)]]) == ("negative machine number -1", {"job": 1, "step": 1})
    assert _refusal([[(0, 1), (1, -2)]]) == ("negative duration -2", {"job": 0, "step": 1})


def test_machine_numbers_stop_below_max_machines() -> None:
    top = Instance(name="wide", jobs=[[(0, 1), (MAX_MACHINES - 1, 0)]])
    assert top.num_machines == MAX_MACHINES and top.size == f"1x{MAX_MACHINES}"
    assert _refusal([[(0, 1)], [(MAX_MACHINES, 1)]]) == (
        f"machine number {MAX_MACHINES} is too large (at most {MAX_MACHINES - 1})", {"job": 1, "step": 0})


@pytest.mark.parametrize("field", ["lower_bound", "upper_bound"])
@pytest.mark.parametrize("value", [True, 5.0, "5", MAX_TIME + 1])
def test_bounds_are_strict_integers_in_range(field: str, value: object) -> None:
    # A bound feeds every gap in the bench tables: `true` must not become a bound of 1.
    with pytest.raises(ValidationError):
        Instance.model_validate({"name": "b", "jobs": [[[0, 1]]], field: value})
    assert getattr(Instance.model_validate({"name": "b", "jobs": [[[0, 1]]], field: MAX_TIME}), field) == MAX_TIME


def test_an_instance_is_frozen() -> None:
    inst = Instance(name="f", jobs=[[(0, 1)]])
    with pytest.raises(ValidationError):
        inst.name = "g"  # type: ignore[misc]


def test_an_instance_without_bounds_has_none_and_its_json_says_so() -> None:
    inst = Instance(name="plain", jobs=[[(0, 2), (1, 3)], [(1, 1)]])
    assert (inst.lower_bound, inst.upper_bound, inst.bounds_source) == (None, None, None)
    assert inst.to_json() == {"name": "plain", "jobs": [[[0, 2], [1, 3]], [[1, 1]]], "lower_bound": None,
                              "upper_bound": None}
    assert Instance.model_validate(inst.to_json()) == inst
