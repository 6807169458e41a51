"""The PNG Gantt chart (alas_argo/jssp/gantt.py), edge by edge: what each bar, label, line, tick, title and legend
entry says, the thresholds that switch to the large-instance overview (canvas width, no bar edges, thinned machine
labels, the jobs' legend), and how ``save_gantt`` writes its file. Written against the survivors of a mutation run
(bench/README.md, "Mutation testing"): the older tests counted bars by kind and read a few legend words, so a
wrong count in a title, a mark drawn on the wrong panel or a threshold one off went unseen.

The instances are made here, one operation per job on chosen machines, so every figure is known exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from matplotlib.colors import to_rgb
from matplotlib.text import Text

from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown
from alas_argo.jssp.gantt import _width_inches, gantt_figure, save_gantt
from alas_argo.jssp.gantt_style import (
    DOWNTIME_COLOR,
    LENGTHENED_COLOR,
    MAKESPAN_COLOR,
    MOVED_COLOR,
    REVEAL_COLOR,
    job_color,
    text_color,
)
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Operation, Schedule

PNG = b"\x89PNG\r\n\x1a\n"


def _chain(durations: list[int], *, machines: int = 1, name: str = "chain") -> tuple[Instance, Schedule]:
    """One operation per job, job j on machine ``j % machines``, the jobs one after another on each machine."""
    inst = Instance(name=name, jobs=[[(j % machines, d)] for j, d in enumerate(durations)])
    ends = [0] * machines
    ops = []
    for j, d in enumerate(durations):
        m = j % machines
        ops.append(Operation(job=j, step=0, machine=m, start=ends[m], end=ends[m] + d))
        ends[m] += d
    return inst, Schedule.from_operations(name, ops)


def _patches(fig: Any, gid: str, panel: int | None = None) -> list[Any]:
    axes = fig.axes if panel is None else [fig.axes[panel]]
    return [p for ax in axes for p in ax.patches if p.get_gid() == gid]


def _lines(ax: Any, gid: str) -> list[float]:
    return [float(line.get_xdata()[0]) for line in ax.lines if line.get_gid() == gid]


def _legend(fig: Any) -> list[str]:
    return [t.get_text() for t in fig.legends[0].get_texts()]


@pytest.fixture
def repaired() -> tuple[Instance, Schedule, Schedule, Disruption]:
    """Three jobs on two machines; the repair moves job 1, stretches job 2 in place and moves and stretches job 0."""
    inst = Instance(name="three", jobs=[[(0, 4)], [(0, 5)], [(1, 6)]])
    before = Schedule.from_operations("three", [Operation(job=0, step=0, machine=0, start=0, end=4),
                                                 Operation(job=1, step=0, machine=0, start=4, end=9),
                                                 Operation(job=2, step=0, machine=1, start=0, end=6)])
    after = Schedule.from_operations("three", [Operation(job=0, step=0, machine=0, start=2, end=8),
                                                Operation(job=1, step=0, machine=0, start=8, end=13),
                                                Operation(job=2, step=0, machine=1, start=0, end=9)])
    d = Disruption(time=2, events=[MachineBreakdown(machine=1, start=14, duration=6),
                                   DurationChange(job=2, step=0, duration=9)])
    return inst, before, after, d


def test_the_canvas_widens_at_400_and_2500_operations() -> None:
    for ops, inches in ((1, 12.0), (400, 12.0), (401, 16.0), (2500, 16.0), (2501, 22.0)):
        inst = Instance(name="w", jobs=[[(0, 1)] for _ in range(ops)])
        assert _width_inches(inst) == inches, ops


def test_the_height_follows_the_machines_within_its_bounds() -> None:
    """0.28 in per machine plus 1.2, at least 2.5 and at most 14 per panel; two panels twice as tall."""
    for machines, height in ((1, 2.5), (6, 0.28 * 6 + 1.2), (46, 14.0)):
        inst, plan = _chain([3] * machines, machines=machines)
        assert gantt_figure(inst, plan).get_size_inches() == pytest.approx((12.0, height)), machines
        assert gantt_figure(inst, plan, before=plan).get_size_inches() == pytest.approx((12.0, 2 * height))


def test_a_job_number_is_written_only_on_a_bar_wide_enough_to_hold_it() -> None:
    """6 px per digit plus 4: on a 1000-long plan drawn 888 px wide (12 in at 100 dpi, 74 % of it), one digit
    needs 11.5 time units, two digits 18.4."""
    durations = [12, 11, 1, 1, 1, 1, 1, 1, 1, 1, 19, 18]
    inst, plan = _chain([*durations, 1000 - sum(durations)])
    ax = gantt_figure(inst, plan).axes[0]
    assert [t.get_text() for t in ax.texts] == ["0", "10", "12"]
    assert [(t.get_position(), t.get_fontsize(), t.get_color()) for t in ax.texts] == [
        ((6.0, 0), 6, text_color(0)), ((40.5, 0), 6, text_color(10)), ((534.0, 0), 6, text_color(12))]
    assert {text_color(0), text_color(10)} == {"white", "black"}  # both text colours are checked


def test_every_bar_sits_on_its_machine_row_in_its_jobs_colour(repaired: tuple[Instance, Schedule, Schedule,
                                                                                Disruption]) -> None:
    inst, before, _, _ = repaired
    fig = gantt_figure(inst, before)
    bars = _patches(fig, "op")
    assert [(p.get_xy(), p.get_width(), p.get_height()) for p in bars] == [
        ((0, -0.4), 4, 0.8), ((0, 0.6), 6, 0.8), ((4, -0.4), 5, 0.8)]
    assert all(p.get_linewidth() == 0.4 and p.get_hatch() is None for p in bars)
    assert all(p.get_edgecolor()[:3] == (0.0, 0.0, 0.0) for p in bars)


def test_moved_and_lengthened_bars_are_told_apart_on_the_after_panel_only(
        repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    inst, before, after, d = repaired
    fig = gantt_figure(inst, after, before=before, disruption=d)
    assert len(_patches(fig, "op", panel=0)) == 3  # 'before' is drawn plain
    assert not _patches(fig, "moved", panel=0) and not _patches(fig, "lengthened", panel=0)
    # job 0: moved and longer (the moved outline wins, hatched); job 1: moved; job 2: longer in place
    moved, longer = _patches(fig, "moved", panel=1), _patches(fig, "lengthened", panel=1)
    assert [(p.get_x(), p.get_linewidth(), p.get_hatch()) for p in moved] == [(2, 1.8, "////"), (8, 1.8, None)]
    assert all(p.get_edgecolor()[:3] == pytest.approx(to_rgb(MOVED_COLOR)) for p in moved)
    assert [(p.get_x(), p.get_linewidth(), p.get_hatch()) for p in longer] == [(0, 1.2, "////")]
    assert longer[0].get_edgecolor()[:3] == pytest.approx(to_rgb(LENGTHENED_COLOR))
    assert not _patches(fig, "op", panel=1)


def test_the_titles_count_the_changes(repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    inst, before, after, d = repaired
    fig = gantt_figure(inst, after, before=before, disruption=d)
    assert [ax.get_title(loc="left") for ax in fig.axes] == [
        "before: makespan 9", "after (2 operations moved, 2 take longer against 'before'): makespan 13"]
    assert [ax.get_xlabel() for ax in fig.axes] == ["", "time"]
    assert fig.get_suptitle() == "three"
    plain = gantt_figure(inst, after, before=after, title="my chart")
    assert [ax.get_title(loc="left") for ax in plain.axes] == [
        "before: makespan 13", "after (0 operations moved, 2 take longer against 'before'): makespan 13"]
    assert plain.get_suptitle() == "my chart"
    shifted = Schedule.from_operations("three", [o.model_copy(update={"start": o.start + 1, "end": o.end + 1})
                                                 for o in before.operations])
    only_moved = gantt_figure(inst, shifted, before=before)
    assert only_moved.axes[1].get_title(loc="left") == "after (3 operations moved against 'before'): makespan 10"
    assert gantt_figure(inst, before).axes[0].get_title(loc="left") == "plan: makespan 9"


def test_downtime_reveal_and_makespan_are_drawn_where_they_happen(
        repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    inst, before, after, d = repaired
    fig = gantt_figure(inst, after, before=before, disruption=d)
    for panel, makespan in ((0, 9), (1, 13)):
        ax = fig.axes[panel]
        (shade,) = _patches(fig, "downtime", panel=panel)
        assert (shade.get_xy(), shade.get_width(), shade.get_height()) == ((14, 0.5), 6, 1.0)
        assert shade.get_alpha() == 0.35 and shade.get_hatch() == "xx"
        assert shade.get_facecolor()[:3] == pytest.approx(to_rgb(DOWNTIME_COLOR))
        assert _lines(ax, "reveal") == [2] and _lines(ax, "makespan") == [makespan]
        # the downtime ends at 20, after both makespans: the axis reaches it, plus 2 %
        assert ax.get_xlim() == pytest.approx((0, 20 * 1.02))
        assert ax.get_ylim() == (1.5, -0.5)  # machine 0 on top
        assert [t.get_text() for t in ax.get_yticklabels()] == ["M0", "M1"]
    assert fig.axes[0].lines[-1].get_color() == MAKESPAN_COLOR


def test_a_disruption_given_twice_is_drawn_once(repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    inst, before, after, d = repaired
    later = Disruption(time=5, events=[MachineBreakdown(machine=0, start=5, duration=2)])
    fig = gantt_figure(inst, after, before=before, disruption=d, disruptions=[d, later])
    assert _lines(fig.axes[1], "reveal") == [2, 5] and len(_patches(fig, "downtime", panel=1)) == 2
    assert "reveal time (2, 5)" in _legend(fig)
    both = gantt_figure(inst, after, before=before, disruption=later, disruptions=[d])
    assert _lines(both.axes[1], "reveal") == [2, 5]  # the single one is added after the list


def test_the_legend_names_each_mark_with_its_count(repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    inst, before, after, d = repaired
    fig = gantt_figure(inst, after, before=before, disruption=d)
    assert _legend(fig) == ["moved (2)", "takes longer (2)", "machine downtime", "reveal time (2)",
                            "makespan (9, 13)", "job 0", "job 1", "job 2"]
    shift = Disruption(time=3, events=[DurationChange(job=2, step=0, duration=9)])  # no downtime
    plain = gantt_figure(inst, before, disruption=shift)
    assert _legend(plain) == ["reveal time (3)", "makespan (9)", "job 0", "job 1", "job 2"]
    assert not _patches(plain, "downtime")
    assert _legend(gantt_figure(inst, before)) == ["makespan (9)", "job 0", "job 1", "job 2"]


def test_the_legend_lists_up_to_60_jobs_in_columns_of_40() -> None:
    for jobs, columns, right in ((39, 1, 0.84), (40, 2, 0.84), (41, 2, 0.78), (60, 2, 0.78), (61, 1, 0.88)):
        inst, plan = _chain([10] * jobs)
        fig = gantt_figure(inst, plan)
        legend = _legend(fig)
        if jobs <= 60:
            assert legend == ["makespan (" + str(10 * jobs) + ")", *(f"job {j}" for j in range(jobs))]
        else:
            assert legend == [f"makespan ({10 * jobs})", "61 jobs: numbers on the bars"]
            note: Any = fig.legends[0].legend_handles[-1]
            assert note is not None and note.get_facecolor()[:3] == note.get_edgecolor()[:3] == (1.0, 1.0, 1.0)
        assert fig.legends[0]._ncols == columns, jobs  # type: ignore[attr-defined]  # no public getter
        # the chart leaves the legend its share of the width (16 %, 22 % from 41 jobs, 12 % beyond 60)
        assert right - 0.03 < fig.axes[0].get_position().x1 <= right, jobs


def test_machine_labels_are_thinned_from_50_machines() -> None:
    for machines, shown, size in ((49, list(range(49)), 7), (50, list(range(0, 50, 2)), 6),
                                  (75, list(range(0, 75, 3)), 6)):
        inst, plan = _chain([2] * machines, machines=machines)
        ax = gantt_figure(inst, plan).axes[0]
        assert [t.get_text() for t in ax.get_yticklabels()] == [f"M{m}" for m in shown], machines
        assert {t.get_fontsize() for t in ax.get_yticklabels()} == {size}
        assert ax.get_ylim() == (machines - 0.5, -0.5)


def test_an_empty_plan_still_gets_an_axis() -> None:
    inst = Instance(name="none", jobs=[[(0, 3)]])
    ax = gantt_figure(inst, Schedule(instance="none", makespan=0, operations=[])).axes[0]
    assert ax.get_xlim() == pytest.approx((0, 1.02))


@pytest.mark.parametrize("ops", [1500, 1501])
def test_past_1500_operations_bars_lose_their_edges_and_labels_shrink(ops: int) -> None:
    """Bars of 1500 operations still get edges; from 1501 none, thinner outlines and smaller job numbers."""
    durations = [5] * ops
    durations[0] = 400  # wide enough for its number either way
    inst, plan = _chain(durations, machines=30)
    moved = Schedule.from_operations(inst.name, [
        o.model_copy(update={"start": o.start + 1, "end": o.end + 1}) if o.job == 1 else o for o in plan.operations])
    fig = gantt_figure(inst, moved, before=plan)
    large = ops > 1500
    assert {p.get_linewidth() for p in _patches(fig, "op")} == {0.0 if large else 0.4}
    assert [p.get_linewidth() for p in _patches(fig, "moved")] == [pytest.approx(1.8 * (0.55 if large else 1.0))]
    assert {t.get_fontsize() for ax in fig.axes for t in ax.texts if t.get_text() == "0"} == {5 if large else 6}


def test_save_gantt_writes_png_or_html_atomically(tmp_path: Path,
                                                  repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    inst, before, after, d = repaired
    png = save_gantt(tmp_path / "a" / "b" / "chart.png", inst, after, before=before, disruption=d, title="T")
    assert png == tmp_path / "a" / "b" / "chart.png" and png.read_bytes()[:8] == PNG
    html = save_gantt(tmp_path / "a" / "chart.HTML", inst, after, before=before, disruption=d, title="Ttl")
    text = html.read_text(encoding="utf-8")
    assert text.startswith("<!doctype html>") and "Ttl" in text and "reveal time 2" in text
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["b", "chart.HTML"]  # no temporary left
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == ["chart.png"]
    save_gantt(str(png), inst, before)  # a string path, and an existing file replaced
    assert png.read_bytes()[:8] == PNG


def test_save_gantt_draws_a_disruption_given_twice_once_in_html_as_in_png(
        tmp_path: Path, repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    """``disruption`` that is also in ``disruptions`` is one disruption: the PNG drew it once, the HTML chart drew
    its reveal line twice (two legend entries 'reveal time 2')."""
    inst, before, after, d = repaired
    html = save_gantt(tmp_path / "g.html", inst, after, before=before, disruption=d, disruptions=[d])
    text = html.read_text(encoding="utf-8")
    assert text.count('"name":"reveal time 2"') == 2  # one trace per panel, as for one disruption
    png = gantt_figure(inst, after, before=before, disruption=d, disruptions=[d])
    assert [_lines(ax, "reveal") for ax in png.axes] == [[2], [2]]


def test_the_legend_keys_look_like_the_marks_they_name(
        repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    inst, before, after, d = repaired
    fig = gantt_figure(inst, after, before=before, disruption=d)
    keys: dict[str, Any] = dict(zip(_legend(fig), fig.legends[0].legend_handles, strict=True))
    white = (1.0, 1.0, 1.0)
    moved, longer, down = keys["moved (2)"], keys["takes longer (2)"], keys["machine downtime"]
    assert (moved.get_facecolor()[:3], moved.get_edgecolor()[:3], moved.get_linewidth()) == (
        white, pytest.approx(to_rgb(MOVED_COLOR)), 1.8)
    assert (longer.get_facecolor()[:3], longer.get_edgecolor()[:3], longer.get_hatch()) == (
        white, pytest.approx(to_rgb(LENGTHENED_COLOR)), "////")
    assert (down.get_facecolor()[:3], down.get_alpha()) == (pytest.approx(to_rgb(DOWNTIME_COLOR)), 0.35)
    reveal, makespan = keys["reveal time (2)"], keys["makespan (9, 13)"]
    assert (reveal.get_color(), reveal.get_linestyle()) == (REVEAL_COLOR, "--")
    assert makespan.get_color() == MAKESPAN_COLOR
    job = keys["job 1"]
    assert (job.get_facecolor()[:3], job.get_edgecolor(), job.get_linewidth()) == (
        pytest.approx(job_color(1)), (0.0, 0.0, 0.0, 1.0), 0.4)  # a black outline, not none
    legend = fig.legends[0]
    assert not legend.get_frame_on() and {t.get_fontsize() for t in legend.get_texts()} == {7}
    # the legend sits in the figure's top right corner, beside the panels
    box = legend.get_window_extent()
    assert box.x0 > fig.axes[0].get_window_extent().x1 and box.y1 > 0.9 * fig.bbox.height
    [suptitle] = [t for t in fig.texts if t.get_text() == "three"]
    assert (suptitle.get_fontsize(), suptitle.get_position()[0], suptitle.get_horizontalalignment()) == (
        10, 0.02, "left")
    assert fig.axes[0].get_shared_x_axes().joined(fig.axes[0], fig.axes[1])  # one time axis for both panels
    # the chart's own lines: dashed reveal at 1.0 pt, solid makespan at 1.2 pt, and the titles at 9 pt
    ax = fig.axes[1]
    [line] = [line for line in ax.lines if line.get_gid() == "reveal"]
    assert (line.get_color(), line.get_linestyle(), line.get_linewidth()) == (REVEAL_COLOR, "--", 1.0)
    [line] = [line for line in ax.lines if line.get_gid() == "makespan"]
    assert (line.get_color(), line.get_linestyle(), line.get_linewidth()) == (MAKESPAN_COLOR, "-", 1.2)
    [title] = [t for t in ax.get_children() if isinstance(t, Text) and t.get_text() == ax.get_title(loc="left")]
    assert title.get_fontsize() == 9


def test_save_gantt_draws_what_gantt_figure_draws(tmp_path: Path,
                                                  repaired: tuple[Instance, Schedule, Schedule, Disruption]) -> None:
    """The PNG is the figure of the same arguments (the Agg canvas writes the same bytes for the same figure):
    the plan before, the disruptions and the title all reach it."""
    inst, before, after, d = repaired
    later = Disruption(time=5, events=[MachineBreakdown(machine=0, start=5, duration=2)])
    args: dict[str, Any] = {"before": before, "disruption": d, "disruptions": [later], "title": "T"}
    written = save_gantt(tmp_path / "s.png", inst, after, **args).read_bytes()
    gantt_figure(inst, after, **args).savefig(tmp_path / "f.png", format="png")
    assert written == (tmp_path / "f.png").read_bytes()
    for dropped in ("before", "disruption", "disruptions", "title"):
        fewer = {k: v for k, v in args.items() if k != dropped}
        gantt_figure(inst, after, **fewer).savefig(tmp_path / "g.png", format="png")
        assert written != (tmp_path / "g.png").read_bytes(), dropped
    html = save_gantt(tmp_path / "s.html", inst, after, **args).read_text(encoding="utf-8")
    assert "before: start" in html and '"name":"reveal time 2"' in html and '"name":"reveal time 5"' in html
