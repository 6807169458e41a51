"""Gantt charts of schedules as PNG: one plan, or a plan before and after a repair.

Drawn with matplotlib's Agg canvas directly (no pyplot, no global backend state), so it works headless, in
threads, and in pods without a display. One row per machine, one colour per job; in the before/after form
the machine downtime is shaded, the reveal time is a dashed line and operations whose start changed are
outlined in red in the "after" panel.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule

__all__ = ["MOVED_COLOR", "gantt_figure", "save_gantt"]

#: Edge colour of operations a repair moved.
MOVED_COLOR = "#d62728"
_DOWNTIME_COLOR = "#7f7f7f"


def _job_color(job: int, jobs: int) -> tuple[float, float, float, float]:
    from matplotlib import colormaps

    cmap = colormaps["tab20" if jobs > 10 else "tab10"]
    return cmap(job % cmap.N)


def _panel(ax: Axes, instance: Instance, schedule: Schedule, title: str, *,
           disruption: Disruption | None, moved: set[tuple[int, int]]) -> None:
    labels = instance.num_operations <= 150  # labels on big plans are unreadable noise
    for o in schedule.operations:
        is_moved = o.key in moved
        ax.add_patch(Rectangle((o.start, o.machine - 0.4), o.end - o.start, 0.8,
                               facecolor=_job_color(o.job, instance.num_jobs),
                               edgecolor=MOVED_COLOR if is_moved else "black",
                               linewidth=2.0 if is_moved else 0.4, gid="moved" if is_moved else "op"))
        if labels and o.end > o.start:
            ax.text((o.start + o.end) / 2, o.machine, f"{o.job}", ha="center", va="center", fontsize=6)
    if disruption is not None:
        for b in disruption.breakdowns:
            ax.add_patch(Rectangle((b.start, b.machine - 0.5), b.duration, 1.0, facecolor=_DOWNTIME_COLOR,
                                   alpha=0.35, hatch="//", edgecolor=_DOWNTIME_COLOR, gid="downtime"))
        ax.axvline(disruption.time, color="black", linestyle="--", linewidth=1.0)
    ax.set_yticks(range(instance.num_machines), [f"M{m}" for m in range(instance.num_machines)])
    ax.set_ylim(instance.num_machines - 0.5, -0.5)
    ax.set_xlim(0, max(1, schedule.makespan) * 1.02)
    ax.axvline(schedule.makespan, color="#444444", linewidth=0.8)
    ax.set_title(f"{title}: makespan {schedule.makespan}", fontsize=9, loc="left")


def gantt_figure(instance: Instance, schedule: Schedule, *, before: Schedule | None = None,
                 disruption: Disruption | None = None, title: str | None = None) -> Figure:
    """A Gantt figure of ``schedule``; with ``before``, two panels and the moved operations highlighted.

    Args:
        instance: The instance the plans schedule.
        schedule: The plan to draw (the repaired one in the before/after form).
        before: The plan in force before the repair.
        disruption: Shades its downtime and marks its reveal time on every panel.
        title: Figure title; the instance name by default.
    """
    panels = 2 if before is not None else 1
    height = max(2.5, 0.28 * instance.num_machines + 1.2)
    fig = Figure(figsize=(12, height * panels), dpi=100)
    FigureCanvasAgg(fig)
    axes = fig.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    moved: set[tuple[int, int]] = set()
    if before is not None:
        was = before.starts()
        moved = {o.key for o in schedule.operations if was.get(o.key) != o.start}
        _panel(axes[0], instance, before, "before", disruption=disruption, moved=set())
        _panel(axes[1], instance, schedule, f"after ({len(moved)} operations moved)", disruption=disruption,
               moved=moved)
    else:
        _panel(axes[0], instance, schedule, "plan", disruption=disruption, moved=set())
    axes[-1].set_xlabel("time")
    handles = [Patch(facecolor="white", edgecolor=MOVED_COLOR, linewidth=2.0, label="moved")] if moved else []
    if disruption is not None and disruption.breakdowns:
        handles.append(Patch(facecolor=_DOWNTIME_COLOR, alpha=0.35, hatch="//", label="downtime"))
    if handles:
        fig.legend(handles=handles, loc="upper right", fontsize=8)
    fig.suptitle(title or instance.name, fontsize=10)
    fig.tight_layout()
    return fig


def save_gantt(path: str | Path, instance: Instance, schedule: Schedule, *, before: Schedule | None = None,
               disruption: Disruption | None = None, title: str | None = None,
               disruptions: Sequence[Disruption] = ()) -> Path:
    """Draw the Gantt chart (see :func:`gantt_figure`) and write it as a PNG, atomically. ``disruptions``: a
    sequence of disruptions, the last one standing for ``disruption``."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if disruptions and disruption is None:
        disruption = disruptions[-1]
    fig = gantt_figure(instance, schedule, before=before, disruption=disruption, title=title)
    tmp = p.with_name(f".{p.name}.tmp")
    fig.savefig(tmp, format="png")
    tmp.replace(p)
    return p
