"""The roles besides the job agents at their edges, left open by mutation testing (the pipeline reaches them only
through the registry, with a full spec, and the validator role only without a baseline):

- the validator role hands the independent validator fresh copies of the instance, the plan, the disruption and
  the baseline (equal, never the objects it was given: the non-circular validation), the baseline decides which
  operations had started, and every verdict and each violation's code is counted;
- the repairer's ``repair_disruption`` hands every knob to ``repair`` (the documented defaults without a spec);
  its ``patch`` keeps the faulty plan's order (the first entry of a duplicate), drops entries the instance does
  not have instead of failing on them, and honours release, minimum starts and durations;
- the optimizer hands every knob to CP-SAT, reports ``dispatch:<rule>`` or ``cpsat:<status>``, keeps the given
  plan (``supervisor``) when nothing strictly shorter was found, and reports the time it took.

Metric counts are read as differences before/after: mutmut runs each mutant in a process forked from one that
already ran the tests, so absolute values hold other tests' counts.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from alas_argo.agents import roles
from alas_argo.agents.roles import Improvement, OptimizerBackend, OptimizerRole, RepairerRole, ValidatorRole
from alas_argo.jssp import planning
from alas_argo.jssp.dispatching import best_dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit
from alas_argo.jssp.schedule import Operation, Schedule
from alas_argo.jssp.validate import validate
from alas_argo.metrics import REGISTRY, series

#: One job of two operations, on machines 0 and 1, 2 long each.
CHAIN = Instance(name="chain", jobs=[[(0, 2), (1, 2)]])
#: Two jobs of one operation each, both on machine 0, 2 long.
PAIR = Instance(name="pair", jobs=[[(0, 2)], [(0, 2)]])


def _plan(instance: Instance, *spans: tuple[int, int, int, int]) -> Schedule:
    """A plan of ``instance`` with (job, step, start, end) per entry, on the instance's machine when it has one."""
    ops = []
    for j, s, a, b in spans:
        known = 0 <= j < instance.num_jobs and 0 <= s < len(instance.jobs[j])
        ops.append(Operation(job=j, step=s, machine=instance.machine(j, s) if known else 0, start=a, end=b))
    return Schedule.from_operations(instance.name, ops)


def _spans(schedule: Schedule) -> dict[tuple[int, int], tuple[int, int]]:
    return {k: (o.start, o.end) for k, o in schedule.by_key().items()}


def _count(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


# -- ValidatorRole -------------------------------------------------------------------------------------------

def test_the_validator_gets_equal_fresh_copies_never_the_objects_handed_in(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def spy(instance: Instance, schedule: Schedule, *, disruption: Disruption | None = None,
            baseline: Schedule | None = None) -> Any:
        seen.update(instance=instance, schedule=schedule, disruption=disruption, baseline=baseline)
        return validate(instance, schedule, disruption=disruption, baseline=baseline)

    monkeypatch.setattr(roles, "validate", spy)
    baseline = _plan(CHAIN, (0, 0, 0, 2), (0, 1, 2, 4))
    candidate = _plan(CHAIN, (0, 0, 0, 2), (0, 1, 4, 6))
    disruption = Disruption(time=1, events=[MachineBreakdown(machine=1, start=1, duration=3)])
    ValidatorRole().check(CHAIN, candidate, disruption=disruption, baseline=baseline)
    given = {"instance": CHAIN, "schedule": candidate, "disruption": disruption, "baseline": baseline}
    for name, original in given.items():
        assert seen[name] == original, name
        assert seen[name] is not original, name


def test_the_baseline_decides_which_operations_had_started() -> None:
    # Revealed at 1: the first operation started at 0 in the plan in force, so moving it to 1 is a frozen
    # operation moved. Without the baseline the validator can only take the candidate's start (1, not before
    # the reveal) as not started, and finds nothing wrong.
    baseline = _plan(CHAIN, (0, 0, 0, 2), (0, 1, 2, 4))
    moved = _plan(CHAIN, (0, 0, 1, 3), (0, 1, 3, 5))
    disruption = Disruption(time=1)
    report = ValidatorRole().check(CHAIN, moved, disruption=disruption, baseline=baseline)
    assert not report.valid
    assert [(str(v.code), v.scope["job"], v.scope["step"]) for v in report.violations] == [("frozen_moved", 0, 0)]
    assert report == validate(CHAIN, moved, disruption=disruption, baseline=baseline)
    assert ValidatorRole().check(CHAIN, moved, disruption=disruption).valid


def test_every_verdict_and_each_violations_code_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(series, "_seen", {})  # no label set filled by other tests folds a code into "other"
    valid_name, codes_name = "alas_validations_total", "alas_validation_violations_total"
    before = {v: _count(valid_name, verdict=v) for v in ("valid", "invalid")}
    overlap = _count(codes_name, code="machine_overlap")

    assert ValidatorRole().check(PAIR, _plan(PAIR, (0, 0, 0, 2), (1, 0, 2, 4))).valid
    assert _count(valid_name, verdict="valid") == before["valid"] + 1
    assert _count(valid_name, verdict="invalid") == before["invalid"]

    report = ValidatorRole().check(PAIR, _plan(PAIR, (0, 0, 0, 2), (1, 0, 1, 3)))
    assert [str(v.code) for v in report.violations] == ["machine_overlap"]
    assert _count(valid_name, verdict="valid") == before["valid"] + 1
    assert _count(valid_name, verdict="invalid") == before["invalid"] + 1
    assert _count(codes_name, code="machine_overlap") == overlap + 1


# -- RepairerRole --------------------------------------------------------------------------------------------

def _recording_repair(monkeypatch: pytest.MonkeyPatch) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def fake(*args: Any, **kwargs: Any) -> str:
        calls.append((args, kwargs))
        return "repaired"

    monkeypatch.setattr(roles, "repair", fake)
    return calls


def test_repair_disruption_hands_the_documented_defaults_to_repair(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recording_repair(monkeypatch)
    baseline, disruption = _plan(CHAIN, (0, 0, 0, 2), (0, 1, 2, 4)), Disruption(time=1)
    assert RepairerRole().repair_disruption(CHAIN, baseline, disruption) == "repaired"
    assert calls == [((CHAIN, baseline, disruption, "lcrp", 10.0),
                      {"seed": 0, "workers": 2, "effort": 1.0, "tolerance": 0.0, "deterministic": True,
                       "first_edit": DEFAULT_FIRST_EDIT})]


def test_repair_disruption_hands_every_knob_to_repair(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recording_repair(monkeypatch)
    baseline, disruption = _plan(CHAIN, (0, 0, 0, 2), (0, 1, 2, 4)), Disruption(time=1)
    role = RepairerRole("aor", budget=2.5, seed=7, workers=3, effort=0.5, tolerance=0.25, deterministic=False,
                        first_edit="tabu")
    role.repair_disruption(CHAIN, baseline, disruption)
    assert calls == [((CHAIN, baseline, disruption, "aor", 2.5),
                      {"seed": 7, "workers": 3, "effort": 0.5, "tolerance": 0.25, "deterministic": False,
                       "first_edit": FirstEdit.TABU})]


@pytest.mark.parametrize("first", [0, 1])
def test_the_patch_keeps_the_faulty_plans_order(first: int) -> None:
    # Both jobs' only operation overlaps on machine 0; the one that started first in the faulty plan goes first.
    other = 1 - first
    patched = RepairerRole().patch(PAIR, _plan(PAIR, (first, 0, 0, 2), (other, 0, 1, 3)))
    assert _spans(patched) == {(first, 0): (0, 2), (other, 0): (2, 4)}


def test_the_patch_reads_a_duplicates_earliest_entry_and_drops_what_the_instance_lacks() -> None:
    # Job 0 is listed at 5 and (again) at 0: its earliest entry, 0, puts it before job 1 (at 3). The entries of a
    # job and a step the instance does not have (job 2, job -1, step 1 of job 0) are dropped, not a crash.
    faulty = _plan(PAIR, (0, 0, 5, 7), (1, 0, 3, 5), (0, 0, 0, 2), (2, 0, 1, 3), (-1, 0, 1, 3), (0, 1, 1, 3))
    patched = RepairerRole().patch(PAIR, faulty)
    assert _spans(patched) == {(0, 0): (0, 2), (1, 0): (2, 4)}
    assert len(patched.operations) == PAIR.num_operations


def test_the_patch_honours_release_minimum_starts_and_durations() -> None:
    draft = _plan(CHAIN, (0, 0, 0, 2), (0, 1, 2, 4))
    role = RepairerRole()
    assert _spans(role.patch(CHAIN, draft)) == {(0, 0): (0, 2), (0, 1): (2, 4)}  # released at 0 by default
    assert _spans(role.patch(CHAIN, draft, release=3)) == {(0, 0): (3, 5), (0, 1): (5, 7)}
    assert _spans(role.patch(CHAIN, draft, min_starts={(0, 1): 6})) == {(0, 0): (0, 2), (0, 1): (6, 8)}
    assert _spans(role.patch(CHAIN, draft, durations={(0, 0): 5})) == {(0, 0): (0, 5), (0, 1): (5, 7)}


# -- OptimizerRole -------------------------------------------------------------------------------------------

def _recording_plan(monkeypatch: pytest.MonkeyPatch, schedule: Schedule) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []

    def fake(instance: Instance, **kwargs: Any) -> SimpleNamespace:
        calls.append({"instance": instance, **kwargs})
        return SimpleNamespace(schedule=schedule, status="OPTIMAL", limits={"kind": "deterministic"})

    monkeypatch.setattr(planning, "plan", fake)
    return calls


def test_the_optimizer_hands_its_defaults_to_cpsat(monkeypatch: pytest.MonkeyPatch) -> None:
    short = _plan(PAIR, (0, 0, 0, 2), (1, 0, 2, 4))
    calls = _recording_plan(monkeypatch, short)
    improved = OptimizerRole().improve(PAIR, _plan(PAIR, (0, 0, 0, 2), (1, 0, 5, 7)))
    assert calls == [{"instance": PAIR, "time_limit": 10.0, "workers": 2, "seed": 0, "deterministic": True}]
    assert (improved.schedule, improved.method, improved.limits) == (short, "cpsat:OPTIMAL",
                                                                     {"kind": "deterministic"})


def test_the_optimizer_hands_every_knob_to_cpsat(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _recording_plan(monkeypatch, _plan(PAIR, (0, 0, 0, 2), (1, 0, 2, 4)))
    role = OptimizerRole("cpsat", time_limit=2.5, workers=3, seed=7, deterministic=False)
    role.improve(PAIR, _plan(PAIR, (0, 0, 0, 2), (1, 0, 5, 7)))
    assert calls == [{"instance": PAIR, "time_limit": 2.5, "workers": 3, "seed": 7, "deterministic": False}]


def test_the_heuristic_optimizer_names_the_rule_that_won() -> None:
    rule, best = best_dispatch(PAIR)
    improved = OptimizerRole(OptimizerBackend.HEURISTIC).improve(PAIR, _plan(PAIR, (0, 0, 0, 2), (1, 0, 5, 7)))
    assert (improved.schedule, improved.method, improved.limits) == (best, f"dispatch:{rule}", {})


def test_a_plan_as_short_as_the_backends_is_kept_as_given() -> None:
    # Equal makespans: the plan handed in stays (the object itself), reported as the supervisor's.
    _, best = best_dispatch(PAIR)
    given = _plan(PAIR, (1, 0, 0, 2), (0, 0, 2, 4))
    assert given.makespan == best.makespan and given != best
    improved = OptimizerRole(OptimizerBackend.HEURISTIC).improve(PAIR, given)
    assert improved.schedule is given
    assert improved.method == "supervisor"


def test_the_improvement_reports_the_time_it_took(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter([100.0, 102.5])
    monkeypatch.setattr(roles, "time", SimpleNamespace(perf_counter=lambda: next(ticks)))
    given = _plan(PAIR, (0, 0, 0, 2), (1, 0, 2, 4))
    improved = OptimizerRole("heuristic").improve(PAIR, given)
    assert improved == Improvement(schedule=given, method="supervisor", seconds=2.5, limits={})
