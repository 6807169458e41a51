"""The interactive HTML Gantt chart (alas_argo/jssp/gantt_html.py), edge by edge: each bar's place, length,
row, colour, outline, hatch, label and hover text; the before panel; every downtime on its own machine's row
in both panels; the reveal and makespan lines and what the legend shows of them; the per-job filter; the
layout (titles, heights, axes); and what ``gantt_html`` hands on. Written against the survivors of a
mutation run (bench/README.md, "Mutation testing"): the older test counted traces and read a few words, so a
bar drawn at the wrong time, a mark on the wrong operation or a downtime on the wrong row went unseen.

The plans are made here on the 3 x 3 ``tiny`` instance, so every figure is known exactly.
"""

from __future__ import annotations

from typing import Any

import plotly.io as pio
import pytest

from alas_argo.benchmarks.validator import round_robin_schedule
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown
from alas_argo.jssp.gantt_html import gantt_html, gantt_plotly
from alas_argo.jssp.gantt_style import (
    DOWNTIME_COLOR,
    LENGTHENED_COLOR,
    MAKESPAN_COLOR,
    MOVED_COLOR,
    REVEAL_COLOR,
    job_hex,
)
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule

# tiny: job 0 = (m0,3)(m1,2)(m2,2); job 1 = (m0,2)(m2,1)(m1,4); job 2 = (m1,4)(m2,3)(m0,1).
# Round robin (the plan before): (0,0) 0-3, (1,0) 3-5, (2,0) 0-4, (0,1) 4-6, (1,1) 5-6, (2,1) 6-9, (0,2) 9-11,
# (1,2) 6-10, (2,2) 9-10; makespan 11.
# After: (0,2) moved to 12-14; (1,2) takes 6 instead of 4 at the same start; (2,2) moved and takes 2 instead of 1.
AFTER = {(0, 2): (12, 14), (1, 2): (6, 12), (2, 2): (11, 13)}
# Machine 0 down over [5, 25) (past both makespans), revealed at 5; machine 2 down over [8, 10), revealed at 8.
DISRUPTIONS = [Disruption(time=5, events=[MachineBreakdown(machine=0, start=5, duration=20)]),
               Disruption(time=8, events=[MachineBreakdown(machine=2, start=8, duration=2)])]


def _after(before: Schedule) -> Schedule:
    ops = [o.model_copy(update=dict(zip(("start", "end"), AFTER[o.key], strict=True))) if o.key in AFTER else o
           for o in before.operations]
    return Schedule.from_operations(before.instance, ops)


@pytest.fixture
def plans(tiny: Instance) -> tuple[Schedule, Schedule]:
    before = round_robin_schedule(tiny)
    return before, _after(before)


def test_every_downtime_is_shaded_on_its_own_machines_row(tiny: Instance, plans: tuple[Schedule, Schedule]) -> None:
    # The machine axis is categorical, listed M2, M1, M0 from the bottom (M0 on top); a shape's numeric y is a
    # place in that list, not a machine number. Machine 0's downtime was drawn on M2's row, and the other way
    # round: the shading sat on a machine that never broke down.
    before, after = plans
    fig = gantt_plotly(tiny, after, before=before, disruptions=DISRUPTIONS)
    shapes = fig.layout.shapes
    assert len(shapes) == 2 * 2  # both downtimes, on both panels
    for shape, row, (machine, start, end) in zip(shapes, (1, 1, 2, 2), [(0, 5, 25), (2, 8, 10)] * 2, strict=True):
        axis = fig.layout["yaxis" if row == 1 else "yaxis2"]
        assert shape.y1 - shape.y0 == 1
        assert axis.categoryarray[int(shape.y0 + 0.5)] == f"M{machine}"  # the row of the machine that broke down
        assert (shape.type, shape.x0, shape.x1) == ("rect", start, end)
        assert (shape.xref, shape.yref) == (("x", "y") if row == 1 else ("x2", "y2"))
        assert (shape.fillcolor, shape.opacity, shape.line.width) == (DOWNTIME_COLOR, 0.35, 0)


def _bars(fig: Any, yaxis: str) -> list[Any]:
    return [t for t in fig.data if t.type == "bar" and t.yaxis == yaxis]


def test_each_bar_is_its_operation_with_its_marks_and_hover(tiny: Instance, plans: tuple[Schedule, Schedule]) -> None:
    before, after = plans
    fig = gantt_plotly(tiny, after, before=before, disruptions=DISRUPTIONS)
    moved, longer = {(0, 2), (2, 2)}, {(1, 2), (2, 2)}
    nominal = {(1, 2): 4, (2, 2): 1}
    for yaxis, plan in (("y", before), ("y2", after)):
        bars = _bars(fig, yaxis)
        assert [t.name for t in bars] == ["job 0", "job 1", "job 2"]
        for job, bar in enumerate(bars):
            ops = [o for o in plan.operations if o.job == job]  # this job's operations only, in plan order
            assert (bar.orientation, bar.legendgroup, bar.showlegend) == ("h", f"job {job}", yaxis == "y2")
            assert bar.base == tuple(o.start for o in ops)
            assert bar.x == tuple(o.end - o.start for o in ops)
            assert bar.y == tuple(f"M{o.machine}" for o in ops)
            assert bar.text == (str(job),) * 3 and (bar.textposition, bar.insidetextanchor) == ("inside", "middle")
            assert bar.marker.color == job_hex(job)
            if yaxis == "y":  # the plan before: no marks, no "before" in the hover
                assert set(bar.marker.line.color) == {"#333333"} and set(bar.marker.line.width) == {0.5}
                assert set(bar.marker.pattern.shape) == {""}
                assert [row[6] for row in bar.customdata] == [""] * 3
                continue
            # moved: red, 2.5 wide (also when it takes longer); only lengthened: orange, 1.5; else grey, 0.5
            assert bar.marker.line.color == tuple(MOVED_COLOR if o.key in moved else LENGTHENED_COLOR
                                                  if o.key in longer else "#333333" for o in ops)
            assert bar.marker.line.width == tuple(2.5 if o.key in moved else 1.5 if o.key in longer else 0.5
                                                  for o in ops)
            assert bar.marker.pattern.shape == tuple("/" if o.key in longer else "" for o in ops)
            assert bar.marker.pattern.fgcolor == LENGTHENED_COLOR
            was = before.by_key()
            for o, row in zip(ops, bar.customdata, strict=True):
                hover = f"<br>before: start {was[o.key].start}, end {was[o.key].end}"
                hover += "<br><b>moved</b>" if o.key in moved else ""
                hover += f"<br><b>takes longer</b> (nominal {nominal[o.key]})" if o.key in longer else ""
                assert list(row) == [o.job, o.step, o.machine, o.start, o.end, o.end - o.start, hover]
    # spelled out once, so the expected texts above are not only the code's own formula
    job2 = _bars(fig, "y2")[2].customdata[2]
    assert job2[6] == "<br>before: start 9, end 10<br><b>moved</b><br><b>takes longer</b> (nominal 1)"


def test_an_operation_the_plan_before_lacks_says_so(tiny: Instance, plans: tuple[Schedule, Schedule]) -> None:
    before, after = plans
    partial = Schedule.from_operations(before.instance, [o for o in before.operations if o.key != (1, 0)])
    fig = gantt_plotly(tiny, after, before=partial)
    row = next(r for r in _bars(fig, "y2")[1].customdata if r[1] == 0)
    assert row[6] == "<br>before: -<br><b>moved</b>"


def test_the_lines_the_legend_entries_and_the_per_job_filter(tiny: Instance,
                                                              plans: tuple[Schedule, Schedule]) -> None:
    before, after = plans
    fig = gantt_plotly(tiny, after, before=before, disruptions=DISRUPTIONS)
    lines = [t for t in fig.data if t.type == "scatter"]
    height = ("M0", "M2")  # from the first machine's row to the last one's
    reveals = [t for t in lines if t.name.startswith("reveal")]
    assert [(t.name, t.x, t.legendgroup, t.yaxis, t.showlegend) for t in reveals] == [
        ("reveal time 5", (5, 5), "reveal 0", "y", False), ("reveal time 5", (5, 5), "reveal 0", "y2", True),
        ("reveal time 8", (8, 8), "reveal 1", "y", False), ("reveal time 8", (8, 8), "reveal 1", "y2", True)]
    for t in reveals:
        assert (t.y, t.mode, t.line.color, t.line.dash, t.hoverinfo) == (height, "lines", REVEAL_COLOR, "dash", "name")
    spans = [t for t in lines if t.name.startswith("makespan")]
    assert [(t.name, t.x, t.legendgroup, t.yaxis) for t in spans] == [
        ("makespan 11", (11, 11), "makespan 1", "y"), ("makespan 14", (14, 14), "makespan 2", "y2")]
    for t in spans:
        assert (t.y, t.mode, t.line.color, t.hoverinfo) == (height, "lines", MAKESPAN_COLOR, "name")
    (key,) = [t for t in lines if t.name == "machine downtime"]  # a legend entry for the shading (shapes have none)
    assert (key.x, key.y, key.mode, key.yaxis) == ((None,), (None,), "markers", "y2")
    assert key.marker.to_plotly_json() == {"color": DOWNTIME_COLOR, "symbol": "square", "size": 12, "opacity": 0.5}
    # The filter: one job's bars in both panels; the lines and the downtime entry stay whatever job is shown.
    buttons = fig.layout.updatemenus[0].buttons
    assert buttons[0].args[0]["visible"] == [True] * len(fig.data)
    for job in range(3):
        shown = buttons[job + 1].args[0]["visible"]
        assert buttons[job + 1].method == "restyle"
        assert [v for t, v in zip(fig.data, shown, strict=True) if t.type == "scatter"] == [True] * len(lines)
        assert [t.name for t, v in zip(fig.data, shown, strict=True) if t.type == "bar" and v] == [f"job {job}"] * 2


def test_no_downtime_no_downtime_entry(tiny: Instance, plans: tuple[Schedule, Schedule]) -> None:
    before, after = plans
    only_longer = [Disruption(time=5, events=[DurationChange(job=1, step=2, duration=6)])]
    fig = gantt_plotly(tiny, after, before=before, disruptions=only_longer)
    assert "machine downtime" not in {t.name for t in fig.data} and not fig.layout.shapes
    assert "reveal time 5" in {t.name for t in fig.data}


def test_the_layout_of_two_panels(tiny: Instance, plans: tuple[Schedule, Schedule]) -> None:
    before, after = plans
    fig = gantt_plotly(tiny, after, before=before, disruptions=DISRUPTIONS)
    assert [a.text for a in fig.layout.annotations] == ["before", "after: 2 moved, 2 take longer"]
    layout = fig.layout
    assert (layout.title.text, layout.barmode, layout.bargap, layout.hovermode) == ("tiny", "overlay", 0.2, "closest")
    assert layout.height == 350 * 2 and layout.template == pio.templates["plotly_white"]
    assert layout.legend.title.text == "click: hide, double-click: only this"
    assert layout.legend.groupclick == "togglegroup"
    menu = layout.updatemenus[0]
    assert (menu.direction, menu.x, menu.xanchor, menu.y, menu.yanchor, menu.showactive) == (
        "down", 0.0, "left", 1.08, "bottom", True)
    assert (layout.uniformtext.minsize, layout.uniformtext.mode) == (7, "hide")
    for axis in (layout.yaxis, layout.yaxis2):  # M0 on top in both panels
        assert (axis.categoryorder, axis.categoryarray) == ("array", ("M2", "M1", "M0"))
    # One time axis: the top panel follows the bottom one, which runs to the last downtime's end (25) plus 2 %.
    assert layout.xaxis.matches == "x2" and layout.xaxis2.range == (0, 25 * 1.02)
    assert layout.xaxis2.title.text == "time" and layout.xaxis.title.text is None
    assert (layout.yaxis.domain[0] - layout.yaxis2.domain[1]) == pytest.approx(0.08)  # the panels' spacing


def test_one_plan_is_one_panel(tiny: Instance, plans: tuple[Schedule, Schedule]) -> None:
    before, _ = plans
    fig = gantt_plotly(tiny, before, title="mine")
    assert [a.text for a in fig.layout.annotations] == ["plan"] and fig.layout.title.text == "mine"
    assert fig.layout.height == 350 and "yaxis2" not in fig.layout
    assert {t.yaxis for t in fig.data} == {"y"} and {t.showlegend for t in _bars(fig, "y")} == {True}
    assert all(row[6] == "" for t in _bars(fig, "y") for row in t.customdata)  # no "before" to tell
    assert fig.layout.xaxis.range == (0, 11 * 1.02) and fig.layout.xaxis.title.text == "time"
    empty = gantt_plotly(tiny, Schedule.from_operations("tiny", []))
    assert empty.layout.xaxis.range == (0, 1.02)  # nothing to draw: still a time axis one unit long


@pytest.mark.parametrize(("machines", "height"), [(3, 350), (20, 28 * 20 + 150), (50, 1400)])
def test_the_height_grows_with_the_machines_between_bounds(machines: int, height: int) -> None:
    inst = Instance(name="wide", jobs=[[(m, 1) for m in range(machines)]])
    plan = round_robin_schedule(inst)
    assert gantt_plotly(inst, plan).layout.height == height
    assert gantt_plotly(inst, plan, before=plan).layout.height == 2 * height


def test_the_html_document_hands_everything_on(tiny: Instance, plans: tuple[Schedule, Schedule]) -> None:
    before, after = plans
    html = gantt_html(tiny, after, before=before, disruptions=DISRUPTIONS, title="my chart")
    assert html.startswith("<!doctype html>") and html.rstrip().endswith("</html>")
    assert "plotly.js v" in html  # the library itself, embedded: the file opens offline
    assert '{"displaylogo": false, "responsive": true}' in html
    for text in ('"my chart"', '"before"', '"reveal time 8"', '"after: 2 moved, 2 take longer"'):
        assert text in html
