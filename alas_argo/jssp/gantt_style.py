"""What the Gantt charts (PNG and HTML) share: job colours, marks, and what changed between two plans.

Colours: hues a golden-ratio step apart, cycling through three saturation/brightness levels, so that jobs
next to each other in number never get neighbouring shades (tab20 pairs a dark and a light shade of each
hue, which is what made job 3 and job 4 indistinguishable). Beyond a few dozen jobs no palette keeps every
colour apart; the charts then rely on job numbers on the bars and on hover.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass

from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule

__all__ = ["DOWNTIME_COLOR", "LENGTHENED_COLOR", "MAKESPAN_COLOR", "MOVED_COLOR", "REVEAL_COLOR", "Changes",
           "changes", "downtimes", "job_color", "job_hex", "text_color"]

#: Outline of operations a repair moved (their start changed).
MOVED_COLOR = "#d62728"
#: Outline (and hatch) of operations that take longer than their nominal duration.
LENGTHENED_COLOR = "#ff7f0e"
#: Shading of machine downtime.
DOWNTIME_COLOR = "#7f7f7f"
#: Reveal-time lines.
REVEAL_COLOR = "#111111"
#: Makespan lines.
MAKESPAN_COLOR = "#1f77b4"

_LEVELS = ((0.70, 0.88), (0.45, 0.98), (0.95, 0.68))  # (saturation, value) cycles with the job number


def job_color(job: int) -> tuple[float, float, float]:
    """RGB in [0, 1] of ``job``: hue advances by the golden ratio, saturation and value cycle in threes."""
    hue = (job * 0.6180339887) % 1.0
    saturation, value = _LEVELS[job % 3]
    return colorsys.hsv_to_rgb(hue, saturation, value)


def job_hex(job: int) -> str:
    """``job_color`` as ``#rrggbb``."""
    return "#" + "".join(f"{round(c * 255):02x}" for c in job_color(job))


def text_color(job: int) -> str:
    """Black or white, whichever reads better on ``job``'s colour."""
    r, g, b = job_color(job)
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


@dataclass(frozen=True)
class Changes:
    """What differs between the plan before a repair and after it."""

    moved: frozenset[tuple[int, int]]  #: (job, step) whose start changed
    lengthened: frozenset[tuple[int, int]]  #: (job, step) that run longer than their nominal duration


def changes(instance: Instance, schedule: Schedule, before: Schedule | None) -> Changes:
    """Moved (start changed against ``before``) and lengthened (longer than the instance says) operations."""
    was = before.starts() if before is not None else {}
    moved = frozenset(o.key for o in schedule.operations if before is not None and was.get(o.key) != o.start)
    lengthened = frozenset(
        o.key for o in schedule.operations
        if 0 <= o.job < instance.num_jobs and 0 <= o.step < len(instance.jobs[o.job])
        and o.end - o.start > instance.duration(o.job, o.step))
    return Changes(moved, lengthened)


def downtimes(disruptions: Sequence[Disruption]) -> list[MachineBreakdown]:
    """Every breakdown of every disruption, once (a later disruption carries unfinished downtime forward)."""
    seen: dict[tuple[int, int, int], MachineBreakdown] = {}
    for d in disruptions:
        for b in d.breakdowns:
            seen.setdefault((b.machine, b.start, b.duration), b)
    return list(seen.values())
