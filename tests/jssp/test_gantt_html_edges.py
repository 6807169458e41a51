"""The interactive HTML Gantt chart (alas_argo/jssp/gantt_html.py), edge by edge: each bar's place, length,
row, colour, outline, hatch, label and hover text; the before panel; every downtime on its own machine's row
in both panels; the reveal and makespan lines and what the legend shows of them; the per-job filter; the
layout (titles, heights, axes); and what ``gantt_html`` hands on. Written against the survivors of a
mutation run (bench/README.md, "Mutation testing"): the older test counted traces and read a few words, so a
bar drawn at the wrong time, a mark on the wrong operation or a downtime on the wrong row went unseen.

The plans are made here on the 3 x 3 ``tiny`` instance, so every figure is known exactly.
"""

from __future__ import annotations

import pytest

from alas_argo.benchmarks.validator import round_robin_schedule
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.gantt_html import gantt_plotly
from alas_argo.jssp.gantt_style import (
    DOWNTIME_COLOR,
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
