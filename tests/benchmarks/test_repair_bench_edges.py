"""The repair benchmark's rows are the repairs they name: each row's method, budget, seed, workers, effort,
tolerance and mode reach `repair`, each row's figures are that repair's, a failed repair is a row of zeros with
its error, and the disruption a row repairs is the one kept for its rerun. Also the exact texts of the rerun
command and of the refusals (mutation survivors of alas_argo/benchmarks/repair.py).

`repair` and `plan` are wrapped, not replaced: the real repairs run (ft06, budgets of a fraction of a second);
the wrappers record what each call was given and, where a test needs figures that cannot be confused with the
defaults, hand back the real result with distinctive values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo.benchmarks import repair as repair_bench
from alas_argo.benchmarks.repair import (
    RepairRow,
    baseline,
    case_disruption,
    check_bench_arguments,
    is_lcrp,
    lcrp_label,
    rerun_command,
    run_repair_bench,
)
from alas_argo.errors import InfeasibleError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption, generate_disruption
from alas_argo.jssp.disruption_families import generate_family
from alas_argo.jssp.repair import FirstEdit, RepairMethod
from alas_argo.jssp.repair.tabu import kernel
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate

# What `repair` got for an argument the caller left out (a dropped argument falls back to its default).
UNSET = "(unset)"

#: The first edit the bench's LCRP rows run at the defaults: the tabu search, when it is built.
RAN = FirstEdit.TABU if kernel() is not None else FirstEdit.REDISPATCH


class RepairSpy:
    """Wraps the module's `repair`: records each call's arguments; optionally rewrites the result's figures."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, figures: list[dict[str, Any]] | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.results: list[Any] = []
        self.figures = figures
        self.real = repair_bench.repair
        monkeypatch.setattr(repair_bench, "repair", self)

    def __call__(self, inst: Any, base: Schedule, disruption: Disruption, method: Any = UNSET, budget: Any = UNSET,
                 **kwargs: Any) -> Any:
        self.calls.append({"method": method, "budget": budget, "disruption": disruption, **kwargs})
        real_kwargs = {k: v for k, v in (("method", method), ("budget", budget)) if v is not UNSET}
        result = self.real(inst, base, disruption, **real_kwargs, **kwargs)
        if self.figures is not None:
            result = result.model_copy(update=self.figures[len(self.results) % len(self.figures)])
        self.results.append(result)
        return result


def test_every_knob_reaches_the_repair_of_its_own_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every repair method has a default in `repair` ("lcrp", 10 s, seed 0, ...): a knob not handed on would
    # still repair something, and the rows labelled "aor" would silently be LCRP's figures.
    spy = RepairSpy(monkeypatch)
    rows = run_repair_bench(["ft06"], scenarios=["shock", "multi-breakdown"], seeds=1, first_seed=3,
                            methods=["aor", "lcrp"], time_limit=0.25, baseline_time_limit=0.3, workers=1,
                            cache=tmp_path / "baselines", lcrp_efforts=(1.0, 2.0), lcrp_tolerance=0.01,
                            deterministic=True, cases=tmp_path / "cases", lcrp_first_edit="tabu")
    assert [(r.scenario, r.seed, r.method) for r in rows] == [
        (s, 3, m) for s in ("shock", "multi-breakdown") for m in ("aor", "lcrp+tol0.01+tabu", "lcrp@2+tol0.01+tabu")]
    knobs = [{k: v for k, v in c.items() if k != "disruption"} for c in spy.calls]
    common = {"budget": 0.25, "seed": 3, "workers": 1, "deterministic": True}
    assert knobs == 2 * [
        # no LCRP tolerance nor first edit for AOR
        {"method": RepairMethod.AOR, **common, "effort": 1.0, "tolerance": 0.0, "first_edit": FirstEdit.REDISPATCH},
        {"method": RepairMethod.LCRP, **common, "effort": 1.0, "tolerance": 0.01, "first_edit": FirstEdit.TABU},
        {"method": RepairMethod.LCRP, **common, "effort": 2.0, "tolerance": 0.01, "first_edit": FirstEdit.TABU},
    ]
    # The disruption repaired is the one drawn with the row's seed (not seed 0), and the one kept for the rerun.
    ft06 = get_instance("ft06")
    base = Schedule.model_validate(json.loads((tmp_path / "baselines" / "ft06.json").read_text()))
    shock = generate_disruption(ft06, base, "shock", seed=3)
    family = generate_family(ft06, base, "multi-breakdown", seed=3)
    assert shock != generate_disruption(ft06, base, "shock", seed=0)
    assert family != generate_family(ft06, base, "multi-breakdown", seed=0)
    assert [c["disruption"] for c in spy.calls] == 3 * [shock] + 3 * [family]
    for scenario, drawn in (("shock", shock), ("multi-breakdown", family)):
        kept = json.loads((tmp_path / "cases" / "ft06" / f"{scenario}-3.json").read_text())
        assert Disruption.model_validate(kept) == drawn == case_disruption(ft06, base, scenario, 3)


def test_the_default_mode_is_wall_clock_and_a_plain_method_has_effort_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = RepairSpy(monkeypatch)
    run_repair_bench(["ft06"], scenarios=["breakdown"], seeds=1, methods=["right-shift"], time_limit=0.2,
                     baseline_time_limit=0.3, workers=1, cache=tmp_path)
    (call,) = spy.calls
    assert (call["method"], call["seed"], call["effort"], call["tolerance"], call["deterministic"]) == \
        (RepairMethod.RIGHT_SHIFT, 0, 1.0, 0.0, False)


def test_a_rows_figures_are_its_repairs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Distinctive values, none a default of RepairRow: a figure not copied, or copied into the wrong column, shows.
    figures = [
        {"makespan": 101, "moved_operations": 7, "total_start_shift": 13, "edit_radius": 17, "neighbourhood_growths": 3,
         "wip_moved": 5, "fallback": True, "seconds": 1.25, "valid": True, "touched_machines": [0, 2, 4],
         "global_reason": "LCRP fell back to the global re-solve"},
        {"makespan": 99, "moved_operations": 2, "total_start_shift": 4, "edit_radius": 6, "neighbourhood_growths": 0,
         "wip_moved": 1, "fallback": False, "seconds": 0.5, "valid": False, "touched_machines": [1],
         "global_reason": None},
    ]
    RepairSpy(monkeypatch, figures)
    rows = run_repair_bench(["ft06"], scenarios=["breakdown"], seeds=1, methods=["aor", "lcrp"], time_limit=0.2,
                            baseline_time_limit=0.3, workers=1, cache=tmp_path, deterministic=True)
    ft06 = get_instance("ft06")
    common: dict[str, Any] = {"instance": "ft06", "size": ft06.size, "scenario": "breakdown", "seed": 0,
              "baseline_makespan": rows[0].baseline_makespan, "error": ""}
    assert rows == [
        RepairRow(method="aor", **common, makespan=101, moved_operations=7, total_start_shift=13, edit_radius=17,
                  neighbourhood_growths=3, wip_moved=5, fallback=True, seconds=1.25, valid=True, touched_machines=3,
                  went_global=True),
        RepairRow(method=lcrp_label(1.0, first_edit=RAN), **common, makespan=99, moved_operations=2,
              total_start_shift=4, edit_radius=6,
                  neighbourhood_growths=0, wip_moved=1, fallback=False, seconds=0.5, valid=False, touched_machines=1,
                  went_global=False),
    ]
    assert rows[0].baseline_makespan == Schedule.model_validate(
        json.loads((tmp_path / "ft06.json").read_text())).makespan


def test_a_failed_repair_is_a_row_of_zeros_that_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise InfeasibleError("no plan honours the downtime", where="lcrp")

    monkeypatch.setattr(repair_bench, "repair", refuse)
    rows = run_repair_bench(["ft06"], scenarios=["breakdown"], seeds=1, methods=["lcrp"], time_limit=0.2,
                            baseline_time_limit=0.3, workers=1, cache=tmp_path, lcrp_efforts=(2.0,))
    assert rows == [RepairRow(instance="ft06", size=get_instance("ft06").size, scenario="breakdown", seed=0,
                              method=lcrp_label(2.0, first_edit=RAN), baseline_makespan=rows[0].baseline_makespan,
                              makespan=0,
                              moved_operations=0, total_start_shift=0, edit_radius=0, neighbourhood_growths=0,
                              wip_moved=0, fallback=False, seconds=0.0, valid=False,
                              error=str(InfeasibleError("no plan honours the downtime", where="lcrp")))]
    assert "no plan honours the downtime" in rows[0].error and rows[0].baseline_makespan > 0


def test_the_baseline_is_planned_on_the_wall_clock_and_needs_no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    real = repair_bench.plan

    def watched(instance: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(instance, **kwargs)

    monkeypatch.setattr(repair_bench, "plan", watched)
    ft06 = get_instance("ft06")
    schedule = baseline(ft06, time_limit=0.2, workers=1, cache=None)  # no cache: planned, written nowhere
    assert validate(ft06, schedule).valid
    assert calls == [{"time_limit": 0.2, "workers": 1, "deterministic": False}]


@pytest.mark.parametrize(("method", "deterministic", "flags"), [
    ("aor", True, ""),
    # An LCRP row names its first edit always (unmarked: the re-dispatch, as every row was before the tabu search
    # became the default).
    ("lcrp", True, " --first-edit redispatch"),
    ("lcrp@4", True, " --effort 4 --first-edit redispatch"),
    ("lcrp+tol0.005", True, " --tolerance 0.005 --first-edit redispatch"),
    ("lcrp@4+tol0.005", False, " --effort 4 --tolerance 0.005 --first-edit redispatch --wall-clock --workers 2"),
    ("lcrp+tabu", True, " --first-edit tabu"),
    ("lcrp@0.5+tol0.005+tabu", True, " --effort 0.5 --tolerance 0.005 --first-edit tabu"),
    ("full", False, " --wall-clock --workers 2"),
])
def test_the_rerun_command_word_for_word(method: str, deterministic: bool, flags: str) -> None:
    row = RepairRow(instance="la01", size="10x5", scenario="shock-sweep", seed=7, method=method, baseline_makespan=1,
                    makespan=1, moved_operations=0, total_start_shift=0, edit_radius=0, neighbourhood_growths=0,
                    wip_moved=0, fallback=False, seconds=0.0, valid=True)
    assert rerun_command("out/r", row, time_limit=0.5, deterministic=deterministic) == (
        "alas repair --instance la01 --schedule out/r/baselines/la01.json "
        f"--disruption out/r/cases/la01/shock-sweep-7.json --method {method.split('@')[0].split('+')[0]} "
        f"--time-limit 0.5 --seed 7{flags} --out r.json")


def test_an_lcrp_label_without_a_tolerance_is_the_effort_alone() -> None:
    assert [lcrp_label(e, first_edit="redispatch") for e in (1.0, 2.0, 0.5)] == ["lcrp", "lcrp@2", "lcrp@0.5"]
    # At the default first edit (the tabu search) the mark follows.
    assert [lcrp_label(e) for e in (1.0, 2.0)] == ["lcrp+tabu", "lcrp@2+tabu"]


def test_an_lcrp_label_names_the_tabu_first_edit_last() -> None:
    assert lcrp_label(0.5, first_edit="tabu") == "lcrp@0.5+tabu"
    assert lcrp_label(4.0, 0.005, "tabu") == "lcrp@4+tol0.005+tabu"
    assert lcrp_label(1.0, first_edit="redispatch") == "lcrp"
    assert is_lcrp("lcrp+tabu") and is_lcrp("lcrp@4+tol0.005+tabu") and not is_lcrp("full+tabu")


@pytest.mark.parametrize(("scenarios", "methods", "message"), [
    ([], ["aor"], "no scenario given (--scenarios takes breakdown, shock, mixed or a family, comma-separated)"),
    (["shock"], [], "no repair method given (--methods takes right-shift, aor, full, full-stable, lcrp, "
                    "comma-separated)"),
    (["quake"], ["aor"], "unknown scenario 'quake'; known: breakdown, shock, mixed, reveal-sweep, long-breakdown, "
                         "multi-breakdown, shock-sweep, mixture"),
    (["shock", "mixed", "shock", "mixed"], ["aor"], "scenario mixed, shock given more than once"),
])
def test_a_refused_argument_is_named_word_for_word(scenarios: list[str], methods: list[str], message: str) -> None:
    with pytest.raises(InputError) as e:
        check_bench_arguments(scenarios, methods, (1.0,), 0.0)
    assert e.value.message == message


def test_a_cached_baseline_names_the_nested_field_and_the_first_violation(tmp_path: Path) -> None:
    ft06 = get_instance("ft06")
    cached = tmp_path / "ft06.json"
    cached.write_text(json.dumps({"instance": "ft06", "makespan": 3, "operations": [{"job": 0}]}), encoding="utf-8")
    with pytest.raises(InputError) as e:
        baseline(ft06, time_limit=0.2, workers=1, cache=tmp_path)
    assert e.value.message == ("not a schedule: Field required at operations.0.step; delete it to plan the "
                               "baseline again")
    assert e.value.where == str(cached)
    other = baseline(get_instance("la01"), time_limit=0.2, workers=1, cache=None)  # another instance's plan
    cached.write_text(json.dumps(other.to_json()), encoding="utf-8")
    first = validate(ft06, other).violations[0]
    with pytest.raises(InputError) as e:
        baseline(ft06, time_limit=0.2, workers=1, cache=tmp_path)
    assert f"first {first.code.value}: {first.message})" in e.value.message


def test_the_library_defaults_are_10_s_budgets_on_two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    # What a library caller gets without the CLI (which hands every one on): the baseline is planned in 0.2 s
    # here whatever it is asked, and AOR does not use its budget, so the defaults cost nothing to check.
    planned: list[dict[str, Any]] = []
    real_plan = repair_bench.plan

    def quick(instance: Any, **kwargs: Any) -> Any:
        planned.append(kwargs)
        return real_plan(instance, **{**kwargs, "time_limit": 0.2})

    monkeypatch.setattr(repair_bench, "plan", quick)
    spy = RepairSpy(monkeypatch)
    run_repair_bench(["ft06"], scenarios=["breakdown"], seeds=1, methods=["aor"])
    assert planned == [{"time_limit": 10.0, "workers": 2, "deterministic": False}]
    (call,) = spy.calls
    assert (call["budget"], call["workers"], call["seed"], call["deterministic"]) == (10.0, 2, 0, False)
