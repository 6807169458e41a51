"""The tables of `alas bench llm --disruptions` on hand-made rows, figure by figure.

`test_llm_disruption.py` runs the experiment and checks a few cells and that the reference wins; which cases a
figure is a mean over (the repair phase's only over cases with a plan in force, moves and gaps only over valid
plans), the rounding, the pooled paired test over all scenarios and its edges, and the report's text went
unseen. Here every summary and test is written out, and the Markdown report as a whole.
"""

from __future__ import annotations

from pathlib import Path

from alas_argo.benchmarks.llm_disruption import LlmDisruptionRow
from alas_argo.benchmarks.llm_disruption_tables import (
    disruption_markdown,
    disruption_paired_tests,
    summarize_disruption,
    write_disruption_bench,
)

_CELL = {"alas": "lcrp (deterministic)", "alas_no_validator": "agents, unchecked", "single_agent": "single prompt"}


def _row(instance: str, variant: str, scenario: str, *, rate: float, static_valid: bool = True,
         valid: bool = True, gap: float | None = None, moved: int | None = None, rounds: int = 0,
         requests: int = 0, calls: int = 0, prompt: int = 0, completion: int = 0, seconds: float = 0.0,
         cost: float | None = 0.0, reference: int | None = None, note: str = "", plan_in_force: str = "own",
         simulated: bool = False, seed: int = 0) -> LlmDisruptionRow:
    return LlmDisruptionRow(
        instance=instance, family=instance.rstrip("0123456789"), variant=variant, seed=seed, scenario=scenario,
        plan_in_force=plan_in_force, model="m", simulated=simulated, static_valid=static_valid,
        static_makespan=None, reveal_time=None, events=1, repair=_CELL[variant], valid=valid, makespan=None,
        reference_makespan=reference, reference_note=note, rate=rate, gap_percent=gap, moved_operations=moved,
        rounds=rounds, trace="", first_violations=None, requests=requests, calls=calls, prompt_tokens=prompt,
        completion_tokens=completion, tokens_estimated=False, seconds=seconds, cost_usd=cost)


def _experiment(*, simulated: bool = False, plan_in_force: str = "own") -> list[LlmDisruptionRow]:
    """alas and alas_no_validator on ft06, la01, la02 under a breakdown, and on ft06, la01 under a shock;
    alas_no_validator's static plan for ft06 is invalid (no plan in force, not priced)."""
    alas, nv = "alas", "alas_no_validator"
    return [
        _row("ft06", alas, "breakdown", rate=100.0, gap=0.0, moved=3, seconds=0.5, reference=55, note="optimal",
             simulated=simulated, plan_in_force=plan_in_force),
        _row("la01", alas, "breakdown", rate=90.0, gap=11.2, moved=5, seconds=1.0, reference=666, note="feasible"),
        _row("la02", alas, "breakdown", rate=80.0, gap=25.0, moved=4, seconds=1.25, reference=655,
             note="optimal (proved)"),
        _row("ft06", nv, "breakdown", rate=0.0, static_valid=False, valid=False, cost=None),
        _row("la01", nv, "breakdown", rate=0.0, valid=False, requests=2, calls=2, prompt=900, completion=100,
             seconds=3.0, cost=0.002, reference=666, note="feasible"),
        _row("la02", nv, "breakdown", rate=75.0, gap=33.2, moved=7, rounds=1, requests=3, calls=3, prompt=1000,
             completion=130, seconds=2.0, cost=0.0010004, reference=655, note="optimal"),
        _row("ft06", alas, "shock", rate=95.0, gap=5.0, moved=2, seconds=0.4, reference=52, note="optimal"),
        _row("la01", alas, "shock", rate=85.0, gap=17.6, moved=6, seconds=0.8),
        _row("ft06", nv, "shock", rate=0.0, static_valid=False, valid=False, cost=None),
        _row("la01", nv, "shock", rate=70.0, gap=42.8, moved=9, requests=1, calls=1, prompt=500, completion=60,
             seconds=1.5, cost=0.0005),
    ]


_KEYS = ("scenario", "scope", "variant", "cases", "static_valid_percent", "success_percent", "rate",
         "gap_percent_valid", "moved_valid", "rounds", "requests", "calls", "prompt_tokens", "completion_tokens",
         "seconds", "cost_usd", "repair", "simulated")
_ALAS, _NV = "lcrp (deterministic)", "agents, unchecked"


def test_every_summary_figure_per_scenario_family_and_overall() -> None:
    """Each cell holds only its scenario's, family's and variant's cases. The repair phase's figures (rounds,
    requests, calls, tokens, seconds) are means over the cases with a plan in force (none: "-"), gap and
    moved operations over valid plans; means to two places, percentages to one; the cost summed only when
    every case was priced."""
    assert [tuple(s.values()) for s in summarize_disruption(_experiment())] == [
        ("breakdown", "ft", "alas", 1, 100.0, 100.0, 100.0, 0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.0, _ALAS, False),
        ("breakdown", "ft", "alas_no_validator", 1, 0.0, 0.0, 0.0, None, None, None, None, None, None, None, None,
         None, _NV, False),
        ("breakdown", "la", "alas", 2, 100.0, 100.0, 85.0, 18.1, 4.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.12, 0.0, _ALAS,
         False),
        ("breakdown", "la", "alas_no_validator", 2, 100.0, 50.0, 37.5, 33.2, 7.0, 0.5, 2.5, 2.5, 950.0, 115.0, 2.5,
         0.003, _NV, False),
        ("breakdown", "overall", "alas", 3, 100.0, 100.0, 90.0, 12.07, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.92, 0.0,
         _ALAS, False),
        ("breakdown", "overall", "alas_no_validator", 3, 66.7, 33.3, 25.0, 33.2, 7.0, 0.5, 2.5, 2.5, 950.0, 115.0,
         2.5, None, _NV, False),
        ("shock", "ft", "alas", 1, 100.0, 100.0, 95.0, 5.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.4, 0.0, _ALAS, False),
        ("shock", "ft", "alas_no_validator", 1, 0.0, 0.0, 0.0, None, None, None, None, None, None, None, None, None,
         _NV, False),
        ("shock", "la", "alas", 1, 100.0, 100.0, 85.0, 17.6, 6.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.8, 0.0, _ALAS, False),
        ("shock", "la", "alas_no_validator", 1, 100.0, 100.0, 70.0, 42.8, 9.0, 0.0, 1.0, 1.0, 500.0, 60.0, 1.5,
         0.0005, _NV, False),
        ("shock", "overall", "alas", 2, 100.0, 100.0, 90.0, 11.3, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.6, 0.0, _ALAS,
         False),
        ("shock", "overall", "alas_no_validator", 2, 50.0, 50.0, 35.0, 42.8, 9.0, 0.0, 1.0, 1.0, 500.0, 60.0, 1.5,
         None, _NV, False),
    ]
    assert all(tuple(s) == _KEYS for s in summarize_disruption(_experiment()))


def test_a_simulated_case_marks_its_summaries() -> None:
    summaries = summarize_disruption(_experiment(simulated=True))
    assert [(s["scenario"], s["scope"], s["variant"]) for s in summaries if s["simulated"]] == [
        ("breakdown", "ft", "alas"), ("breakdown", "overall", "alas")]


def test_a_variant_missing_from_a_scenario_has_no_cell_there() -> None:
    rows = [_row("ft06", "alas", "breakdown", rate=100.0), _row("ft06", "single_agent", "breakdown", rate=50.0),
            _row("ft06", "alas", "shock", rate=90.0)]
    assert [(s["scenario"], s["scope"], s["variant"], s["rate"]) for s in summarize_disruption(rows)] == [
        ("breakdown", "ft", "alas", 100.0), ("breakdown", "ft", "single_agent", 50.0),
        ("breakdown", "overall", "alas", 100.0), ("breakdown", "overall", "single_agent", 50.0),
        ("shock", "ft", "alas", 90.0), ("shock", "overall", "alas", 90.0)]


def test_the_paired_tests_per_scenario_and_over_all() -> None:
    """Differences 100, 90, 5 under the breakdown; 95, 15 under the shock (two are enough); over all, the
    per-instance means of both scenarios: 97.5, 52.5, 5."""
    assert disruption_paired_tests(_experiment()) == [
        {"scenario": "breakdown", "reference": "alas", "variant": "alas_no_validator", "instances": 3,
         "mean_difference": 65.0, "statistic": 0.0, "p_value": 0.25},
        {"scenario": "shock", "reference": "alas", "variant": "alas_no_validator", "instances": 2,
         "mean_difference": 55.0, "statistic": 0.0, "p_value": 0.5},
        {"scenario": "all", "reference": "alas", "variant": "alas_no_validator", "instances": 3,
         "mean_difference": 51.67, "statistic": 0.0, "p_value": 0.25}]


def test_one_scenario_has_no_pooled_test_and_one_differing_instance_is_not_tested() -> None:
    """Differences 0, 0 and 1 on ft06, la01 and la02 (la03 only alas ran: no pair): one instance differs, so
    no statistic and no p ("-" in the report); with a single scenario there is no "all" row repeating it."""
    rows = [_row(n, "alas", "breakdown", rate=r) for n, r in (("ft06", 50.0), ("la01", 60.0), ("la02", 71.0),
                                                             ("la03", 10.0))]
    rows += [_row(n, "alas_no_validator", "breakdown", rate=r) for n, r in (("ft06", 50.0), ("la01", 60.0),
                                                                            ("la02", 70.0))]
    assert disruption_paired_tests(rows) == [
        {"scenario": "breakdown", "reference": "alas", "variant": "alas_no_validator", "instances": 3,
         "mean_difference": 0.33, "statistic": None, "p_value": None}]
    assert disruption_markdown(rows, "t").endswith("| breakdown | alas_no_validator | 3 | 0.33 | - | - |\n")


def test_a_scenario_without_the_reference_is_skipped_not_the_end() -> None:
    """The shock has no alas case: no test there, but the breakdown after it and the pooled test remain (the
    pooled means take every case of each variant: alas_no_validator's ft06 is (10 + 80) / 2)."""
    rows = [_row("ft06", "alas_no_validator", "shock", rate=10.0),
            *(_row(n, "alas", "breakdown", rate=r) for n, r in (("ft06", 90.0), ("la01", 80.0))),
            *(_row(n, "alas_no_validator", "breakdown", rate=r) for n, r in (("ft06", 80.0), ("la01", 60.0)))]
    assert [(t["scenario"], t["instances"], t["mean_difference"], t["p_value"])
            for t in disruption_paired_tests(rows)] == [("breakdown", 2, 15.0, 0.5), ("all", 2, 32.5, 0.5)]

EXPECTED_MARKDOWN = "\n".join([
    '## t — SIMULATED planner: no model was asked',
    '',
    "Plan in force: each variant's own static plan; an invalid one cannot be in force and the case fails "
    'before the disruption (static valid %). Success: the validator accepts the final plan against the '
    'disruption and the plan in force. Reference: the full re-solve (CP-SAT over every free operation) of'
    ' the same plan in force and disruption, time-boxed; proved optimal in 4 of 6 cases. Rate: 100 x '
    'reference / makespan for a valid final plan (at most 100), 0 otherwise. Gap to the reference and '
    'moved operations (start changed against the plan in force): valid plans only. Rounds, requests (LLM '
    'exchanges), HTTP calls (0 when replayed), tokens, seconds and cost: the repair phase only, over the '
    'cases with a plan in force.',
    '',
    'What each variant does under the disruption:',
    '',
    "- `alas`: LCRP then the validator: deterministic, no LLM call (the pipeline's agents do not take "
    'part in repairs); the patch if LCRP finds no plan',
    "- `alas_no_validator`: the job agents' first re-plan, merged, is the plan (no check, no feedback)",
    '',
    '| scenario | scope | variant | repair | cases | static valid % | success % | rate | gap % (valid) | '
    'moved ops (valid) | rounds | requests | HTTP calls | prompt tok | completion tok | seconds | cost '
    'USD |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    '| breakdown | ft | alas | lcrp (deterministic) | 1 | 100.0 | 100.0 | 100.0 | 0.0 | 3.0 | 0.0 | 0.0 |'
    ' 0.0 | 0.0 | 0.0 | 0.5 | 0.0 |',
    '| breakdown | ft | alas_no_validator | agents, unchecked | 1 | 0.0 | 0.0 | 0.0 | - | - | - | - | - |'
    ' - | - | - | - |',
    '| breakdown | la | alas | lcrp (deterministic) | 2 | 100.0 | 100.0 | 85.0 | 18.1 | 4.5 | 0.0 | 0.0 |'
    ' 0.0 | 0.0 | 0.0 | 1.12 | 0.0 |',
    '| breakdown | la | alas_no_validator | agents, unchecked | 2 | 100.0 | 50.0 | 37.5 | 33.2 | 7.0 | '
    '0.5 | 2.5 | 2.5 | 950.0 | 115.0 | 2.5 | 0.003 |',
    '| breakdown | overall | alas | lcrp (deterministic) | 3 | 100.0 | 100.0 | 90.0 | 12.07 | 4.0 | 0.0 |'
    ' 0.0 | 0.0 | 0.0 | 0.0 | 0.92 | 0.0 |',
    '| breakdown | overall | alas_no_validator | agents, unchecked | 3 | 66.7 | 33.3 | 25.0 | 33.2 | 7.0 '
    '| 0.5 | 2.5 | 2.5 | 950.0 | 115.0 | 2.5 | - |',
    '| shock | ft | alas | lcrp (deterministic) | 1 | 100.0 | 100.0 | 95.0 | 5.0 | 2.0 | 0.0 | 0.0 | 0.0 '
    '| 0.0 | 0.0 | 0.4 | 0.0 |',
    '| shock | ft | alas_no_validator | agents, unchecked | 1 | 0.0 | 0.0 | 0.0 | - | - | - | - | - | - |'
    ' - | - | - |',
    '| shock | la | alas | lcrp (deterministic) | 1 | 100.0 | 100.0 | 85.0 | 17.6 | 6.0 | 0.0 | 0.0 | 0.0'
    ' | 0.0 | 0.0 | 0.8 | 0.0 |',
    '| shock | la | alas_no_validator | agents, unchecked | 1 | 100.0 | 100.0 | 70.0 | 42.8 | 9.0 | 0.0 |'
    ' 1.0 | 1.0 | 500.0 | 60.0 | 1.5 | 0.0005 |',
    '| shock | overall | alas | lcrp (deterministic) | 2 | 100.0 | 100.0 | 90.0 | 11.3 | 4.0 | 0.0 | 0.0 '
    '| 0.0 | 0.0 | 0.0 | 0.6 | 0.0 |',
    '| shock | overall | alas_no_validator | agents, unchecked | 2 | 50.0 | 50.0 | 35.0 | 42.8 | 9.0 | '
    '0.0 | 1.0 | 1.0 | 500.0 | 60.0 | 1.5 | - |',
    '',
    'Paired test (Wilcoxon signed-rank, per-instance mean rate, alas vs each):',
    '',
    '| scenario | variant | instances | mean difference | statistic | p |',
    '|---|---|---|---|---|---|',
    '| breakdown | alas_no_validator | 3 | 65.0 | 0.0 | 0.25 |',
    '| shock | alas_no_validator | 2 | 55.0 | 0.0 | 0.5 |',
    '| all | alas_no_validator | 3 | 51.67 | 0.0 | 0.25 |',
    "",
])


def test_the_whole_report() -> None:
    """The report a reader gets: the title says simulated, each variant's repair, how many references were
    proved optimal, each table's header, p to three significant digits, "-" for a figure that does not exist."""
    assert disruption_markdown(_experiment(simulated=True), "t") == EXPECTED_MARKDOWN


def test_a_shared_plan_in_force_is_said() -> None:
    md = disruption_markdown(_experiment(plan_in_force="alas"), "t")
    assert md.startswith("## t\n\nPlan in force: the alas variant's static plan for every variant (shared). "
                         "Success:")


def test_a_report_without_the_reference_has_no_paired_test() -> None:
    """Only the variants that ran are described, in the variants' order, and there is nothing to pair."""
    rows = [_row("ft06", "single_agent", "breakdown", rate=40.0),
            _row("ft06", "alas_no_validator", "breakdown", rate=50.0)]
    md = disruption_markdown(rows, "t")
    assert "proved optimal in 0 of 0 cases" in md and "Paired test" not in md
    assert ("What each variant does under the disruption:\n\n"
            "- `alas_no_validator`: the job agents' first re-plan, merged, is the plan (no check, no feedback)\n"
            "- `single_agent`: one prompt re-plans the whole instance from the reveal time\n\n| scenario |") in md
    assert md.endswith("| breakdown | overall | alas_no_validator | agents, unchecked | 1 | 100.0 | 100.0 | 50.0 | - "
                       "| - | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 | 0.0 |\n")


def test_the_files_are_written_into_a_new_directory(tmp_path: Path) -> None:
    rows = _experiment(simulated=True)
    write_disruption_bench(tmp_path / "new" / "out", rows[:1], "old")
    csv_path, md_path = write_disruption_bench(tmp_path / "new" / "out", rows, "t")  # a second run, same --out
    assert (csv_path.name, md_path.name) == ("llm_disruption.csv", "llm_disruption.md")
    assert md_path.read_text(encoding="utf-8") == EXPECTED_MARKDOWN
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ",".join(LlmDisruptionRow.__dataclass_fields__) and len(lines) == 1 + len(rows)
    assert lines[1].startswith("ft06,ft,alas,0,breakdown,own,m,True,True,,,1,lcrp (deterministic),True,,55,optimal,")
