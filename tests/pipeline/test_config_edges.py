"""What one ALAS run is asked to do (alas_argo/pipeline/config.py), edge by edge: every default a run gets when
nothing is said (a run's recorded inputs and resume compare them), each range at both ends (a workflow's
parameters reach the pipeline through this model alone, so its bounds are the refusal), the closed sets of
planners, optimizers, repair methods and LCRP's first edits, the variants' names, and that a configuration
cannot be changed once made.

mutmut leaves class bodies alone, so the module has no mutmut mutants; hand mutants of its Field arguments
(bench/README.md, fifteenth session) found most defaults and a lower or upper end of most ranges checked by no
test.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from alas_argo.bounds import MAX_FAULTS, MAX_FEEDBACK_ROUNDS, MAX_LOCAL_DISRUPTIONS, MAX_WAIT_SECONDS, MAX_WORKERS
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT
from alas_argo.pipeline import RunConfig, Variant
from alas_argo.seeds import MAX_SEED


def test_every_default_of_a_run() -> None:
    assert RunConfig(instance="ft06").model_dump() == {
        "instance": "ft06", "planner": "cpsat", "optimizer": "auto", "feedback_rounds": 5, "disrupt": None,
        "disruptions": 1, "seed": 0, "time_limit": 10.0, "repair_method": "lcrp", "repair_budget": 5.0,
        "repair_effort": 1.0, "repair_tolerance": 0.0, "workers": 2, "max_revalidations": 3,
        "variant": Variant.FULL, "faults": 0, "agent_timeout": 60.0, "deterministic": True,
        "repair_first_edit": DEFAULT_FIRST_EDIT}


#: (field, the lowest value accepted, the highest, a value just below, just above); None: no such end.
RANGES: list[tuple[str, Any, Any, Any, Any]] = [
    ("feedback_rounds", 0, MAX_FEEDBACK_ROUNDS, -1, MAX_FEEDBACK_ROUNDS + 1),
    ("disruptions", 1, MAX_LOCAL_DISRUPTIONS, 0, MAX_LOCAL_DISRUPTIONS + 1),
    ("seed", 0, MAX_SEED, -1, MAX_SEED + 1),
    ("time_limit", 1e-9, MAX_WAIT_SECONDS, 0.0, MAX_WAIT_SECONDS + 1),
    ("repair_budget", 1e-9, MAX_WAIT_SECONDS, 0.0, MAX_WAIT_SECONDS + 1),
    ("repair_effort", 1e-9, 100.0, 0.0, 100.000001),
    ("repair_tolerance", 0.0, 0.1, -1e-9, 0.100001),
    ("workers", 1, MAX_WORKERS, 0, MAX_WORKERS + 1),
    ("max_revalidations", 1, 20, 0, 21),
    ("faults", 0, MAX_FAULTS, -1, MAX_FAULTS + 1),
    ("agent_timeout", 1e-9, MAX_WAIT_SECONDS, 0.0, MAX_WAIT_SECONDS + 1),
]


@pytest.mark.parametrize(("field", "lowest", "highest", "below", "above"), RANGES, ids=[r[0] for r in RANGES])
def test_each_range_holds_both_ends_and_refuses_just_outside(field: str, lowest: Any, highest: Any, below: Any,
                                                            above: Any) -> None:
    for value in (lowest, highest):
        assert getattr(RunConfig(instance="ft06", **{field: value}), field) == value
    for value in (below, above):
        if value is None:
            continue
        with pytest.raises(ValidationError) as refused:
            RunConfig(instance="ft06", **{field: value})
        assert refused.value.errors()[0]["loc"] == (field,)


@pytest.mark.parametrize(("field", "members"), [
    ("planner", ["heuristic", "cpsat", "llm", "simulated"]),
    ("optimizer", ["auto", "heuristic", "cpsat", "none"]),
    ("repair_method", ["lcrp", "aor", "right-shift", "full", "full-stable"]),
    ("variant", ["full", "no_repair", "no_validator"]),
    ("repair_first_edit", ["redispatch", "tabu"]),
])
def test_the_closed_sets_accept_each_member_and_nothing_else(field: str, members: list[str]) -> None:
    for member in members:
        assert getattr(RunConfig(instance="ft06", **{field: member}), field) == member
    with pytest.raises(ValidationError):
        RunConfig(instance="ft06", **{field: "other"})


def test_a_configuration_cannot_be_changed_once_made() -> None:
    config = RunConfig(instance="ft06")
    with pytest.raises(ValidationError):
        config.seed = 3  # type: ignore[misc]
    assert config.seed == 0
