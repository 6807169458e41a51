"""Gantt charts people can read: distinct job colours with labels and a legend beyond 10 jobs, moved and
lengthened operations told apart, every disruption's downtime, reveal and makespan lines in the legend, a
large-instance overview, and the interactive HTML chart (hover, per-job filter, legend)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown, carry_forward
from alas_argo.jssp.gantt import gantt_figure, save_gantt
from alas_argo.jssp.gantt_html import gantt_html, gantt_plotly
from alas_argo.jssp.gantt_style import LENGTHENED_COLOR, MOVED_COLOR, job_color
from alas_argo.jssp.repair import repair
from alas_argo.jssp.schedule import Schedule


@pytest.fixture(scope="module")
def case() -> tuple[Schedule, Schedule, list[Disruption]]:
    """ta01 (15 jobs): a plan, two disruptions on different machines, the plan after both repairs."""
    inst = get_instance("ta01")
    plan = dispatch(inst, "mwkr")
    first = Disruption(time=200, events=[MachineBreakdown(machine=3, start=200, duration=120),
                                         DurationChange(job=4, step=9, duration=200)])
    after_first = repair(inst, plan, first, "right-shift").schedule
    second = carry_forward(first, Disruption(time=600, events=[MachineBreakdown(machine=9, start=600,
                                                                                duration=150)]))
    final = repair(inst, after_first, second, "right-shift").schedule
    return plan, final, [first, second]


def _patches(fig, gid: str) -> list:
    return [p for ax in fig.axes for p in ax.patches if p.get_gid() == gid]


def test_job_colours_are_distinct() -> None:
    colours = [job_color(j) for j in range(15)]
    closest = min(sum((a - b) ** 2 for a, b in zip(x, y, strict=True)) ** 0.5
                  for x, y in itertools.combinations(colours, 2))
    assert closest > 0.12  # tab20 had pairs 0.2 apart in lightness only; here no two of 15 jobs are that close


def test_more_than_ten_jobs_get_labels_and_a_legend(case: tuple[Schedule, Schedule, list[Disruption]]) -> None:
    plan, _, _ = case
    fig = gantt_figure(get_instance("ta01"), plan)
    labels = {t.get_text() for ax in fig.axes for t in ax.texts}
    assert {str(j) for j in range(15)} <= labels
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert [f"job {j}" for j in range(15)] == [t for t in legend if t.startswith("job ")]


def test_moved_and_lengthened_every_downtime_and_the_lines(case: tuple[Schedule, Schedule, list[Disruption]]) -> None:
    plan, final, disruptions = case
    inst = get_instance("ta01")
    fig = gantt_figure(inst, final, before=plan, disruptions=disruptions)
    moved, longer = _patches(fig, "moved"), _patches(fig, "lengthened")
    assert moved and all(p.get_edgecolor()[:3] == pytest.approx((214 / 255, 39 / 255, 40 / 255)) for p in moved)
    # job 4 step 9 runs 200 instead of its nominal duration: hatched (in orange unless it also moved)
    hatched = [p for p in moved + longer if p.get_hatch()]
    assert len(hatched) == 1 and MOVED_COLOR != LENGTHENED_COLOR
    assert all(p.get_edgecolor()[:3] == pytest.approx((1.0, 127 / 255, 14 / 255)) for p in longer)
    assert len(_patches(fig, "downtime")) == 2 * 2  # both disruptions' downtime, on both panels
    legend = " | ".join(t.get_text() for t in fig.legends[0].get_texts())
    assert "reveal time (200, 600)" in legend and f"makespan ({plan.makespan}, {final.makespan})" in legend
    assert "moved (" in legend and "takes longer (" in legend and "machine downtime" in legend


def test_a_large_instance_gets_a_readable_overview(tmp_path: Path) -> None:
    inst = get_instance("ta71")  # 100 jobs x 20 machines
    plan = dispatch(inst, "mwkr")
    fig = gantt_figure(inst, plan)
    assert fig.get_size_inches()[0] >= 16
    assert all(p.get_linewidth() == 0 for p in _patches(fig, "op"))  # no edge clutter on 2000 bars
    assert any(t.get_text() for ax in fig.axes for t in ax.texts)  # wide bars still carry their job
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "100 jobs: numbers on the bars" in legend
    out = save_gantt(tmp_path / "ta71.png", inst, plan)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_interactive_chart(case: tuple[Schedule, Schedule, list[Disruption]], tmp_path: Path) -> None:
    plan, final, disruptions = case
    inst = get_instance("ta01")
    fig = gantt_plotly(inst, final, before=plan, disruptions=disruptions)
    bars = [t for t in fig.data if t.type == "bar"]
    assert {t.name for t in bars} == {f"job {j}" for j in range(15)}
    assert all(t.legendgroup == t.name for t in bars)  # clicking a job in the legend hides it in both panels
    hover = bars[0].hovertemplate
    for word in ("job", "step", "machine", "start", "end"):
        assert word in hover
    after = [t for t in bars if t.showlegend]
    details = " ".join(row[6] for t in after for row in t.customdata)
    assert "before: start" in details and "<b>moved</b>" in details and "takes longer" in details
    names = {t.name for t in fig.data}
    assert {"reveal time 200", "reveal time 600", f"makespan {final.makespan}", "machine downtime"} <= names
    assert len(fig.layout.shapes) == 2 * 2  # every downtime on both panels
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["all jobs", *(f"job {j}" for j in range(15))]
    only_three = buttons[4].args[0]["visible"]
    assert [t.name for t, v in zip(fig.data, only_three, strict=True) if v and t.type == "bar"] == ["job 3"] * 2
    html = gantt_html(inst, final, before=plan, disruptions=disruptions)
    assert html.startswith("<!doctype html>") and "plotly" in html and "https://cdn" not in html[:2000]


def test_cli_writes_html_and_refuses_other_formats(tmp_path: Path, case: tuple[Schedule, Schedule, list[Disruption]],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    plan, final, disruptions = case
    files = {}
    for name, doc in (("s", final.to_json()), ("b", plan.to_json()), ("d", disruptions[-1].to_json())):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_text(json.dumps(doc))
    argv = ["gantt", "--instance", "ta01", "--schedule", str(files["s"]), "--before", str(files["b"]),
            "--disruption", str(files["d"])]
    assert main([*argv, "--out", str(tmp_path / "g.html")]) == 0
    assert (tmp_path / "g.html").read_text().startswith("<!doctype html>")
    assert main([*argv, "--out", str(tmp_path / "g.jpg")]) == 2
    assert "must end in .html, .png" in capsys.readouterr().err
