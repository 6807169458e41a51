"""The tables of `alas bench llm` on hand-made rows, figure by figure.

`test_llm_bench.py` runs the experiment and only checks that the tables exist and that the reference wins; a
figure computed over the wrong cases, rounded to the wrong place or left out, and the paired test's edges (two
instances that differ, only one that differs, an instance one variant did not run) went unseen. Here every
summary, test and prompt size is written out, and the Markdown report as a whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.benchmarks.llm_bench import LlmCaseRow
from alas_argo.benchmarks.llm_tables import (
    llm_markdown,
    paired_tests,
    prompt_sizes,
    summarize_llm,
    write_llm_bench,
)


def _row(instance: str, variant: str, *, rate: float, valid: bool = True, patched: bool = False,
         at_best: bool = False, gap: float | None = None, rounds: int = 1, calls: int = 1, prompt: int = 100,
         completion: int = 10, seconds: float = 1.0, cost: float | None = None, agent: float | None = None,
         single: int = 300, scope: str = "normal", simulated: bool = False, seed: int = 0) -> LlmCaseRow:
    return LlmCaseRow(
        instance=instance, family=instance.rstrip("0123456789"), variant=variant, seed=seed, model="m",
        simulated=simulated, valid=valid, makespan=None, best_known=None, optimal_rate=rate, at_best=at_best,
        gap_percent=gap, rounds=rounds, trace="", first_violations=None, patched=patched, calls=calls,
        prompt_tokens=prompt, completion_tokens=completion, tokens_estimated=False, seconds=seconds,
        cost_usd=cost, agent_prompt_tokens=agent, single_prompt_tokens=single, context_scope=scope)


def _experiment(*, simulated: bool = False) -> list[LlmCaseRow]:
    """alas and single_agent on ft06, la01 and la02; single_agent fails ft06 and has one unpriced case."""
    return [
        _row("ft06", "alas", rate=100.0, at_best=True, gap=0.0, rounds=1, calls=6, prompt=1000, completion=200,
             seconds=1.0, cost=0.001, agent=100.0, simulated=simulated),
        _row("la01", "alas", rate=80.0, patched=True, gap=25.0, rounds=2, calls=7, prompt=1200, completion=250,
             seconds=2.0, cost=0.0012344, agent=110.0, single=400),
        _row("la02", "alas", rate=90.0, gap=11.2, rounds=2, calls=8, prompt=1100, completion=230, seconds=2.5,
             cost=0.0001, agent=120.0, single=500),
        _row("ft06", "single_agent", rate=0.0, valid=False, rounds=3, calls=3, prompt=900, completion=300,
             seconds=4.0, cost=None),
        _row("la01", "single_agent", rate=75.0, gap=33.33, rounds=1, calls=1, prompt=800, completion=100,
             seconds=0.5, cost=0.0005, single=400),
        _row("la02", "single_agent", rate=60.0, gap=66.67, rounds=2, calls=2, prompt=850, completion=120,
             seconds=0.7, cost=0.0004, single=500),
    ]


def _summary(scope: str, variant: str, **figures: object) -> dict[str, object]:
    return {"scope": scope, "variant": variant, **figures, "simulated": False}


def test_every_summary_figure_per_family_and_overall() -> None:
    """Each cell holds only its family's and variant's cases; means to two places, percentages to one, the
    gap over valid plans only, the cost summed only when every case was priced."""
    assert summarize_llm(_experiment()) == [
        _summary("ft", "alas", cases=1, success_percent=100.0, patched_percent=0.0, optimal_rate=100.0,
                 at_best_percent=100.0, gap_percent_valid=0.0, rounds=1.0, calls=6.0, prompt_tokens=1000.0,
                 completion_tokens=200.0, seconds=1.0, cost_usd=0.001),
        _summary("ft", "single_agent", cases=1, success_percent=0.0, patched_percent=0.0, optimal_rate=0.0,
                 at_best_percent=0.0, gap_percent_valid=None, rounds=3.0, calls=3.0, prompt_tokens=900.0,
                 completion_tokens=300.0, seconds=4.0, cost_usd=None),
        _summary("la", "alas", cases=2, success_percent=100.0, patched_percent=50.0, optimal_rate=85.0,
                 at_best_percent=0.0, gap_percent_valid=18.1, rounds=2.0, calls=7.5, prompt_tokens=1150.0,
                 completion_tokens=240.0, seconds=2.25, cost_usd=0.001334),
        _summary("la", "single_agent", cases=2, success_percent=100.0, patched_percent=0.0, optimal_rate=67.5,
                 at_best_percent=0.0, gap_percent_valid=50.0, rounds=1.5, calls=1.5, prompt_tokens=825.0,
                 completion_tokens=110.0, seconds=0.6, cost_usd=0.0009),
        _summary("overall", "alas", cases=3, success_percent=100.0, patched_percent=33.3, optimal_rate=90.0,
                 at_best_percent=33.3, gap_percent_valid=12.07, rounds=1.67, calls=7.0, prompt_tokens=1100.0,
                 completion_tokens=226.67, seconds=1.83, cost_usd=0.002334),
        _summary("overall", "single_agent", cases=3, success_percent=66.7, patched_percent=0.0, optimal_rate=45.0,
                 at_best_percent=0.0, gap_percent_valid=50.0, rounds=2.0, calls=2.0, prompt_tokens=850.0,
                 completion_tokens=173.33, seconds=1.73, cost_usd=None),
    ]


def test_a_simulated_case_marks_its_summaries() -> None:
    summaries = summarize_llm(_experiment(simulated=True))
    assert [(s["scope"], s["variant"]) for s in summaries if s["simulated"]] == [("ft", "alas"), ("overall", "alas")]


def test_the_paired_test_over_the_instances_both_ran() -> None:
    """alas against single_agent: differences 100, 5 and 30 (three instances, all differing)."""
    assert paired_tests(_experiment()) == [
        {"reference": "alas", "variant": "single_agent", "instances": 3, "mean_difference": 45.0,
         "statistic": 0.0, "p_value": 0.25}]


def test_two_differing_instances_are_enough_and_an_unpaired_one_is_left_out() -> None:
    """Two differences (10 and 20) are tested; la03, which only alas ran, is no pair and not counted."""
    rows = [_row("ft06", "alas", rate=90.0), _row("la01", "alas", rate=80.0), _row("la03", "alas", rate=50.0),
            _row("ft06", "b", rate=80.0), _row("la01", "b", rate=60.0)]
    assert paired_tests(rows) == [{"reference": "alas", "variant": "b", "instances": 2, "mean_difference": 15.0,
                                   "statistic": 0.0, "p_value": 0.5}]


def test_one_differing_instance_is_not_tested() -> None:
    """Differences 0, 0 and 1: one instance differs, so no statistic and no p (not a test of one pair)."""
    rows = [_row(name, "alas", rate=r) for name, r in (("ft06", 50.0), ("la01", 60.0), ("la02", 71.0))]
    rows += [_row(name, "b", rate=r) for name, r in (("ft06", 50.0), ("la01", 60.0), ("la02", 70.0))]
    assert paired_tests(rows) == [{"reference": "alas", "variant": "b", "instances": 3, "mean_difference": 0.33,
                                   "statistic": None, "p_value": None}]


def test_prompt_sizes_per_instance_and_scope() -> None:
    """A scope with no job agent on an instance (the single agent's) is skipped, not the end of the instance;
    the mean agent prompt to one place, against the single-agent prompt."""
    rows = [_row("ft06", "single_agent", rate=0.0, single=300),
            *(_row("ft06", "alas", rate=0.0, agent=a, single=300, scope="minimal", seed=s)
              for s, a in enumerate((100.0, 101.0, 101.0))),
            _row("la01", "alas", rate=0.0, agent=200.0, single=400)]
    assert prompt_sizes(rows) == [
        {"instance": "ft06", "scope": "minimal", "agent_prompt_tokens": 100.7, "single_prompt_tokens": 300,
         "agent_over_single_percent": 33.6, "saved_percent": 66.4},
        {"instance": "la01", "scope": "normal", "agent_prompt_tokens": 200.0, "single_prompt_tokens": 400,
         "agent_over_single_percent": 50.0, "saved_percent": 50.0}]


EXPECTED_MARKDOWN = """\
## t — SIMULATED planner: no model was asked

Optimal rate: 100 x best known / makespan for a valid final plan, 0 for an invalid one (mean over cases); \
patched: the deterministic patch made the plan after K rounds; at best: share of cases whose valid plan reaches \
the best known makespan; gap: (makespan - best known) / best known, valid plans only.

| scope | variant | cases | success % | patched % | optimal rate | at best % | gap % (valid) | rounds | calls \
| prompt tok | completion tok | seconds | cost USD |
|---|---|---|---|---|---|---|---|---|---|---|---|---|---|
| ft | alas | 1 | 100.0 | 0.0 | 100.0 | 100.0 | 0.0 | 1.0 | 6.0 | 1000.0 | 200.0 | 1.0 | 0.001 |
| ft | single_agent | 1 | 0.0 | 0.0 | 0.0 | 0.0 | - | 3.0 | 3.0 | 900.0 | 300.0 | 4.0 | - |
| la | alas | 2 | 100.0 | 50.0 | 85.0 | 0.0 | 18.1 | 2.0 | 7.5 | 1150.0 | 240.0 | 2.25 | 0.001334 |
| la | single_agent | 2 | 100.0 | 0.0 | 67.5 | 0.0 | 50.0 | 1.5 | 1.5 | 825.0 | 110.0 | 0.6 | 0.0009 |
| overall | alas | 3 | 100.0 | 33.3 | 90.0 | 33.3 | 12.07 | 1.67 | 7.0 | 1100.0 | 226.67 | 1.83 | 0.002334 |
| overall | single_agent | 3 | 66.7 | 0.0 | 45.0 | 0.0 | 50.0 | 2.0 | 2.0 | 850.0 | 173.33 | 1.73 | - |

Paired test (Wilcoxon signed-rank, per-instance mean optimal rate, alas vs each):

| variant | instances | mean difference | statistic | p |
|---|---|---|---|---|
| single_agent | 3 | 45.0 | 0.0 | 0.25 |

Prompt size (tokens, four characters a token): one job agent's first prompt vs the single-agent prompt for the \
whole instance:

| instance | scope | agent prompt | single-agent prompt | agent / single % | saved % |
|---|---|---|---|---|---|
| ft06 | normal | 100.0 | 300 | 33.3 | 66.7 |
| la01 | normal | 110.0 | 400 | 27.5 | 72.5 |
| la02 | normal | 120.0 | 500 | 24.0 | 76.0 |
"""


def test_the_whole_report() -> None:
    """The report a reader gets: the title says simulated, each table's header, the definitions, p to three
    significant digits, "-" for a figure that does not exist."""
    assert llm_markdown(_experiment(simulated=True), "t") == EXPECTED_MARKDOWN


def test_a_report_without_the_reference_has_no_paired_test_and_a_plain_title() -> None:
    rows = [r for r in _experiment() if r.variant != "alas"]
    md = llm_markdown(rows, "t")
    assert md.startswith("## t\n\nOptimal rate:") and "Paired test" not in md and "Prompt size" not in md
    assert md.endswith("| overall | single_agent | 3 | 66.7 | 0.0 | 45.0 | 0.0 | 50.0 | 2.0 | 2.0 | 850.0 | 173.33 "
                       "| 1.73 | - |\n")


def test_the_files_are_written_into_a_new_directory(tmp_path: Path) -> None:
    rows = _experiment(simulated=True)
    csv_path, md_path = write_llm_bench(tmp_path / "new" / "out", rows, "t")
    assert (csv_path.name, md_path.name) == ("llm_bench.csv", "llm_bench.md")
    assert md_path.read_text(encoding="utf-8") == EXPECTED_MARKDOWN
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ",".join(LlmCaseRow.__dataclass_fields__) and len(lines) == 1 + len(rows)
    assert lines[1].startswith("ft06,ft,alas,0,m,True,True,,,100.0,True,0.0,1,")


@pytest.mark.parametrize("scope", ["minimal", "full"])
def test_another_context_scope_is_its_own_variant(scope: str) -> None:
    """A job-agent row measured at another context scope is labelled with it; a single-agent row is not."""
    rows = [_row("ft06", "alas", rate=100.0, agent=100.0), _row("ft06", "alas", rate=50.0, agent=60.0, scope=scope),
            _row("ft06", "single_agent", rate=40.0, scope=scope)]
    assert [(s["variant"], s["optimal_rate"]) for s in summarize_llm(rows) if s["scope"] == "overall"] == [
        ("alas", 100.0), (f"alas[{scope}]", 50.0), ("single_agent", 40.0)]
