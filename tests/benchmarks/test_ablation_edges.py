"""The ablation benchmark's bookkeeping, with the pipeline replaced by a stand-in so that every row field can be
set and read back: what each trial's run is configured with (seed per trial, the optimizer `auto` means, the
repair budget, a fresh run id), how a result becomes a row (injected kinds, the optimal rate, "at best", the
feedback trace), the per-variant summary's every figure, and the CSV and Markdown files. The real pipeline runs in
`tests/benchmarks/test_ablation.py`; these pin the figures it only samples."""

from __future__ import annotations

import csv
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from alas_argo.benchmarks import ablation
from alas_argo.benchmarks.ablation import AblationRow, run_ablation, summarize_ablation, write_ablation
from alas_argo.pipeline import RunConfig, Variant
from alas_argo.runtime import RunStatus


def _result(*, succeeded: bool, makespan: int | None, best: int | None, faults: list[dict[str, Any]] | None = None,
            feedback: tuple[int, ...] = (), seconds: float = 1.23456, with_run: bool = True) -> SimpleNamespace:
    return SimpleNamespace(
        run=SimpleNamespace(outputs={"inject": {"faults": faults or []}}) if with_run else None,
        final=SimpleNamespace(makespan=makespan) if makespan is not None else None,
        instance=SimpleNamespace(upper_bound=best), status=RunStatus.SUCCEEDED if succeeded else RunStatus.FAILED,
        succeeded=succeeded, seconds=seconds, feedback=[{"violations": float(v)} for v in feedback])


class Pipeline:
    """Stands in for `run_pipeline`: records each config and run id, answers from a script."""

    def __init__(self, answers: list[SimpleNamespace]) -> None:
        self.answers = answers
        self.configs: list[RunConfig] = []
        self.run_ids: list[str] = []

    def __call__(self, config: RunConfig, log: Any) -> SimpleNamespace:
        self.configs.append(config)
        self.run_ids.append(log.run_id)
        return self.answers[len(self.configs) - 1]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Pipeline:
    pipeline = Pipeline([])
    monkeypatch.setattr(ablation, "run_pipeline", pipeline)
    return pipeline


def test_each_trial_is_configured_with_its_seed_and_a_fresh_run(fake: Pipeline) -> None:
    fake.answers = [_result(succeeded=True, makespan=60, best=55)] * 4
    seen: list[AblationRow] = []
    rows = run_ablation(["ft06"], variants=[Variant.FULL, Variant.NO_REPAIR], trials=2, faults=3,
                        planner="heuristic", feedback_rounds=4, time_limit=0.75, seed=10, on_row=seen.append)
    assert seen == rows and [(r.variant, r.trial) for r in rows] == [
        ("full", 0), ("full", 1), ("no_repair", 0), ("no_repair", 1)]
    assert fake.run_ids == ["ft06-full-0", "ft06-full-1", "ft06-no_repair-0", "ft06-no_repair-1"]
    first = fake.configs[0]
    assert (first.instance, first.planner, first.faults, first.variant, first.time_limit, first.repair_budget,
            first.optimizer, first.feedback_rounds) == ("ft06", "heuristic", 3, Variant.FULL, 0.75, 0.75, "auto", 4)
    assert [c.seed for c in fake.configs] == [10, 11, 10, 11]  # the same seeds for every variant
    assert [c.variant for c in fake.configs] == [Variant.FULL, Variant.FULL, Variant.NO_REPAIR, Variant.NO_REPAIR]


def test_the_defaults_are_the_papers_protocol(fake: Pipeline) -> None:
    """Every variant, 20 trials from seed 0, the simulated planner's own faults only, 5 feedback rounds, 1 s."""
    fake.answers = [_result(succeeded=True, makespan=60, best=55)] * 60
    rows = run_ablation(["ft06"])
    assert len(rows) == 60 and [r.variant for r in rows[::20]] == ["full", "no_repair", "no_validator"]
    assert [c.seed for c in fake.configs] == list(range(20)) * 3
    assert {(c.planner, c.faults, c.optimizer, c.feedback_rounds, c.time_limit, c.repair_budget)
            for c in fake.configs} == {("simulated", 0, "none", 5, 1.0, 1.0)}


@pytest.mark.parametrize(("planner", "given", "used"), [
    ("simulated", "auto", "none"), ("llm", "auto", "none"), ("heuristic", "auto", "auto"),
    ("simulated", "cpsat", "cpsat")])
def test_auto_means_no_optimizer_for_the_planners_whose_faults_must_reach_the_validator(
        fake: Pipeline, planner: str, given: str, used: str) -> None:
    fake.answers = [_result(succeeded=True, makespan=60, best=55)]
    run_ablation(["ft06"], variants=[Variant.FULL], trials=1, planner=planner, optimizer=given)
    assert fake.configs[0].optimizer == used


def test_a_result_becomes_a_row(fake: Pipeline) -> None:
    fake.answers = [_result(succeeded=True, makespan=60, best=54, feedback=(7, 2, 0), seconds=1.23456,
                            faults=[{"kind": "swap"}, {"kind": "overlap"}, {"kind": "swap"}])]
    [row] = run_ablation(["ft06"], variants=[Variant.FULL], trials=1, faults=3, planner="simulated")
    assert row == AblationRow(instance="ft06", variant="full", trial=0, faults=3, injected="overlap,swap",
                              status="succeeded", final_valid=True, makespan=60, upper_bound=54, seconds=1.235,
                              planner="simulated", optimal_rate=90.0, at_best=False, feedback_trace="7 > 2 > 0")


@pytest.mark.parametrize(("result", "rate", "at_best"), [
    (_result(succeeded=True, makespan=55, best=55), 100.0, True),  # at the best known
    (_result(succeeded=True, makespan=54, best=55), 100.0, True),  # below it (a wrong bound): capped, at best
    (_result(succeeded=True, makespan=56, best=55), 98.214, False),  # rounded to three places
    (_result(succeeded=False, makespan=55, best=55), 0.0, False),  # an invalid plan is never at best
    (_result(succeeded=True, makespan=55, best=None), 0.0, False),  # no best known
    (_result(succeeded=True, makespan=None, best=55), 0.0, False),  # no final plan
])
def test_the_optimal_rate_and_at_best(fake: Pipeline, result: SimpleNamespace, rate: float, at_best: bool) -> None:
    fake.answers = [result]
    [row] = run_ablation(["ft06"], variants=[Variant.FULL], trials=1)
    assert (row.optimal_rate, row.at_best) == (rate, at_best)


def test_a_stored_result_without_a_run_has_no_injected_faults(fake: Pipeline) -> None:
    fake.answers = [_result(succeeded=False, makespan=None, best=55, with_run=False)]
    [row] = run_ablation(["ft06"], variants=[Variant.NO_VALIDATOR], trials=1)
    assert (row.injected, row.status, row.final_valid, row.makespan, row.feedback_trace) == (
        "", "failed", False, None, "")


def _row(variant: str, *, valid: bool, makespan: int | None, best: int | None = 100, rate: float = 0.0,
         at_best: bool = False, planner: str = "heuristic") -> AblationRow:
    return AblationRow(instance="x", variant=variant, trial=0, faults=0, injected="", status="s", final_valid=valid,
                       makespan=makespan, upper_bound=best, seconds=0.0, planner=planner, optimal_rate=rate,
                       at_best=at_best)


def test_the_summary_per_variant_in_first_seen_order() -> None:
    rows = [
        _row("no_repair", valid=True, makespan=110, rate=90.909),
        _row("full", valid=True, makespan=100, rate=100.0, at_best=True, planner="simulated"),
        _row("full", valid=True, makespan=103, best=None, rate=0.0),  # valid, but no gap without a best known
        _row("full", valid=False, makespan=90, rate=0.0),  # an invalid plan's makespan counts nowhere
        _row("no_repair", valid=True, makespan=None),  # "valid" without a plan is not a valid plan
        _row("no_repair", valid=True, makespan=120, best=0, rate=0.0),  # a best known of 0: no gap
    ]
    assert summarize_ablation(rows) == [
        {"variant": "no_repair", "trials": 3, "valid_final_plans": 2, "valid_rate_percent": 66.7,
         "mean_makespan_valid": 115.0, "mean_gap_percent_valid": 10.0, "optimal_rate": 30.3,
         "at_best_percent": 0.0, "simulated": False},
        {"variant": "full", "trials": 3, "valid_final_plans": 2, "valid_rate_percent": 66.7,
         "mean_makespan_valid": 101.5, "mean_gap_percent_valid": 0.0, "optimal_rate": 33.33,
         "at_best_percent": 33.3, "simulated": True},
    ]


def test_the_means_are_rounded_makespan_to_one_place_and_gap_to_two() -> None:
    rows = [_row("full", valid=True, makespan=m, best=99) for m in (100, 101, 101)]
    [only] = summarize_ablation(rows)
    assert (only["mean_makespan_valid"], only["mean_gap_percent_valid"]) == (100.7, 1.68)


def test_a_variant_without_valid_plans_has_no_means() -> None:
    [only] = summarize_ablation([_row("no_validator", valid=False, makespan=100)] * 2)
    assert only == {"variant": "no_validator", "trials": 2, "valid_final_plans": 0, "valid_rate_percent": 0.0,
                    "mean_makespan_valid": None, "mean_gap_percent_valid": None, "optimal_rate": 0.0,
                    "at_best_percent": 0.0, "simulated": False}
    assert summarize_ablation([]) == []


def test_the_files_hold_every_trial_and_the_summary(tmp_path: Path) -> None:
    rows = [_row("full", valid=True, makespan=105, rate=95.238, planner="simulated"),
            _row("no_repair", valid=False, makespan=None)]
    csv_path, md_path = write_ablation(tmp_path / "out" / "abl", rows)
    assert (csv_path, md_path) == (tmp_path / "out" / "abl" / "ablation.csv", tmp_path / "out" / "abl" / "ablation.md")
    with csv_path.open(encoding="utf-8") as f:
        read = list(csv.DictReader(f))
    assert list(read[0]) == list(AblationRow.__dataclass_fields__) and [r["variant"] for r in read] == [
        "full", "no_repair"]
    assert md_path.read_text(encoding="utf-8").splitlines() == [
        "Planner: heuristic, simulated (SIMULATED: no model was asked). Optimal rate: 100 x best known / makespan "
        "for a valid final plan, 0 otherwise.",
        "",
        "| variant | trials | valid final plans | valid % | optimal rate | at best % | mean makespan (valid) "
        "| mean gap % (valid) |",
        "|---|---|---|---|---|---|---|---|",
        "| full | 1 | 1 | 100.0 | 95.24 | 0.0 | 105.0 | 5.0 |",
        "| no_repair | 1 | 0 | 0.0 | 0.0 | 0.0 | None | None |",
    ]
    assert md_path.read_text(encoding="utf-8").endswith("|\n")


def test_a_run_without_the_simulator_says_no_simulation(tmp_path: Path) -> None:
    _, md_path = write_ablation(tmp_path, [_row("full", valid=True, makespan=100, rate=100.0)])
    assert md_path.read_text(encoding="utf-8").startswith("Planner: heuristic. Optimal rate: ")
