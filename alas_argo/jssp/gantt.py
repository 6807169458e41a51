"""Gantt charts of schedules as PNG: one plan, or a plan before and after a repair (the interactive HTML form
is :mod:`alas_argo.jssp.gantt_html`).

Drawn with matplotlib's Agg canvas directly (no pyplot, no global backend state), so it works headless, in
threads, and in pods without a display. One row per machine, one colour per job (:mod:`.gantt_style`), the
job number on every bar wide enough to hold it and a job legend beside the chart. In the before/after form
the operations whose start changed are outlined in red, those that run longer than their nominal duration
are hatched in orange, every disruption's downtime is shaded, and reveal times and makespans are lines named
in the legend. Large instances (hundreds of jobs, dozens of machines) get a wider canvas, no bar edges and
thinned machine labels, so the overview stays readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from alas_argo.deferred import deferred
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.gantt_style import (
    DOWNTIME_COLOR,
    LENGTHENED_COLOR,
    MAKESPAN_COLOR,
    MOVED_COLOR,
    REVEAL_COLOR,
    Changes,
    changes,
    downtimes,
    job_color,
    text_color,
)
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule

if TYPE_CHECKING:
    from matplotlib import figure, lines, patches
    from matplotlib.axes import Axes
    from matplotlib.backends import backend_agg
else:  # imported when the first chart is drawn (alas_argo.deferred)
    backend_agg, figure = deferred("matplotlib.backends.backend_agg"), deferred("matplotlib.figure")
    lines, patches = deferred("matplotlib.lines"), deferred("matplotlib.patches")

__all__ = ["MOVED_COLOR", "gantt_figure", "save_gantt"]

#: Jobs listed one by one in the legend; beyond, the legend says that bars carry their job numbers.
LEGEND_JOBS = 60
_DPI = 100


def _width_inches(instance: Instance) -> float:
    ops = instance.num_operations
    return 12.0 if ops <= 400 else 16.0 if ops <= 2500 else 22.0


def _panel(ax: Axes, instance: Instance, schedule: Schedule, title: str, *, disruptions: Sequence[Disruption],
           marks: Changes | None, x_max: float, plot_px: float) -> None:
    large = instance.num_operations > 1500
    edge = 0.0 if large else 0.4
    px_per_unit = plot_px / x_max
    for o in schedule.operations:
        moved = marks is not None and o.key in marks.moved
        longer = marks is not None and o.key in marks.lengthened
        gid = "moved" if moved else "lengthened" if longer else "op"
        ax.add_patch(patches.Rectangle(
            (o.start, o.machine - 0.4), o.end - o.start, 0.8, facecolor=job_color(o.job),
            edgecolor=MOVED_COLOR if moved else LENGTHENED_COLOR if longer else "black",
            linewidth=(1.8 if moved else 1.2 if longer else edge) * (0.55 if large else 1.0),
            hatch="////" if longer else None, gid=gid))
        label = str(o.job)
        if (o.end - o.start) * px_per_unit >= 6 * len(label) + 4:  # only where the number fits
            ax.text((o.start + o.end) / 2, o.machine, label, ha="center", va="center",
                    fontsize=6 if not large else 5, color=text_color(o.job))
    for b in downtimes(disruptions):
        ax.add_patch(patches.Rectangle((b.start, b.machine - 0.5), b.duration, 1.0, facecolor=DOWNTIME_COLOR,
                                       alpha=0.35, hatch="xx", edgecolor=DOWNTIME_COLOR, gid="downtime"))
    for d in disruptions:
        ax.axvline(d.time, color=REVEAL_COLOR, linestyle="--", linewidth=1.0, gid="reveal")
    ax.axvline(schedule.makespan, color=MAKESPAN_COLOR, linewidth=1.2, gid="makespan")
    step = max(1, instance.num_machines // 25)  # thinned labels on tall charts
    ticks = list(range(0, instance.num_machines, step))
    ax.set_yticks(ticks, [f"M{m}" for m in ticks], fontsize=7 if step == 1 else 6)
    ax.set_ylim(instance.num_machines - 0.5, -0.5)
    ax.set_xlim(0, x_max)
    ax.set_title(f"{title}: makespan {schedule.makespan}", fontsize=9, loc="left")


def _legend(fig: figure.Figure, instance: Instance, *, disruptions: Sequence[Disruption], marks: Changes | None,
            makespans: Sequence[int]) -> None:
    handles: list[patches.Patch | lines.Line2D] = []
    if marks is not None and marks.moved:
        handles.append(patches.Patch(facecolor="white", edgecolor=MOVED_COLOR, linewidth=1.8,
                                     label=f"moved ({len(marks.moved)})"))
    if marks is not None and marks.lengthened:
        handles.append(patches.Patch(facecolor="white", edgecolor=LENGTHENED_COLOR, hatch="////", linewidth=1.2,
                                     label=f"takes longer ({len(marks.lengthened)})"))
    if downtimes(disruptions):
        handles.append(patches.Patch(facecolor=DOWNTIME_COLOR, alpha=0.35, hatch="xx", label="machine downtime"))
    if disruptions:
        times = ", ".join(str(d.time) for d in disruptions)
        handles.append(lines.Line2D([], [], color=REVEAL_COLOR, linestyle="--", label=f"reveal time ({times})"))
    handles.append(lines.Line2D([], [], color=MAKESPAN_COLOR,
                                label="makespan (" + ", ".join(map(str, makespans)) + ")"))
    if instance.num_jobs <= LEGEND_JOBS:
        handles += [patches.Patch(facecolor=job_color(j), edgecolor="black", linewidth=0.4, label=f"job {j}")
                    for j in range(instance.num_jobs)]
    else:
        handles.append(patches.Patch(facecolor="white", edgecolor="white",
                                     label=f"{instance.num_jobs} jobs: numbers on the bars"))
    columns = 1 + (len(handles) - 1) // 40
    fig.legend(handles=handles, loc="upper right", fontsize=7, ncols=columns, frameon=False)


def gantt_figure(instance: Instance, schedule: Schedule, *, before: Schedule | None = None,
                 disruption: Disruption | None = None, title: str | None = None,
                 disruptions: Sequence[Disruption] = ()) -> figure.Figure:
    """A Gantt figure of ``schedule``; with ``before``, two panels and the changes marked.

    Args:
        instance: The instance the plans schedule.
        schedule: The plan to draw (the repaired one in the before/after form).
        before: The plan in force before the repair(s).
        disruption: A disruption to show (its downtime shaded, its reveal time marked).
        title: Figure title; the instance name by default.
        disruptions: Several disruptions to show (a run's sequence); with ``disruption``, both are shown.
    """
    shown = [*disruptions, *([disruption] if disruption is not None and disruption not in disruptions else [])]
    panels = 2 if before is not None else 1
    height = min(14.0, max(2.5, 0.28 * instance.num_machines + 1.2))
    width = _width_inches(instance)
    legend_share = 0.16 if instance.num_jobs <= 40 else 0.22 if instance.num_jobs <= LEGEND_JOBS else 0.12
    fig = figure.Figure(figsize=(width, height * panels), dpi=_DPI)
    backend_agg.FigureCanvasAgg(fig)
    axes = fig.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    plans = [before, schedule] if before is not None else [schedule]
    x_max = max(1, *(p.makespan for p in plans if p is not None), *(b.end for b in downtimes(shown))) * 1.02
    plot_px = width * _DPI * (0.9 - legend_share)
    marks = changes(instance, schedule, before) if before is not None else None
    if before is not None and marks is not None:
        _panel(axes[0], instance, before, "before", disruptions=shown, marks=None, x_max=x_max, plot_px=plot_px)
        moved = f"{len(marks.moved)} operations moved" + (f", {len(marks.lengthened)} take longer"
                                                          if marks.lengthened else "")
        _panel(axes[1], instance, schedule, f"after ({moved} against 'before')", disruptions=shown, marks=marks,
               x_max=x_max, plot_px=plot_px)
    else:
        _panel(axes[0], instance, schedule, "plan", disruptions=shown, marks=None, x_max=x_max, plot_px=plot_px)
    axes[-1].set_xlabel("time")
    _legend(fig, instance, disruptions=shown, marks=marks, makespans=[p.makespan for p in plans if p is not None])
    fig.suptitle(title or instance.name, fontsize=10, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1 - legend_share, 0.97))
    return fig


def save_gantt(path: str | Path, instance: Instance, schedule: Schedule, *, before: Schedule | None = None,
               disruption: Disruption | None = None, title: str | None = None,
               disruptions: Sequence[Disruption] = ()) -> Path:
    """Draw the Gantt chart (see :func:`gantt_figure`) and write it atomically: interactive HTML when ``path``
    ends in ``.html`` (:mod:`alas_argo.jssp.gantt_html`), else PNG."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    if p.suffix.lower() == ".html":
        from alas_argo.jssp.gantt_html import gantt_html  # plotly only when HTML is asked for

        shown = [*disruptions, *([disruption] if disruption is not None and disruption not in disruptions else [])]
        tmp.write_text(gantt_html(instance, schedule, before=before, disruptions=shown, title=title),
                       encoding="utf-8")
    else:
        fig = gantt_figure(instance, schedule, before=before, disruption=disruption, title=title,
                           disruptions=disruptions)
        fig.savefig(tmp, format="png")
    tmp.replace(p)
    return p
