"""Gantt charts: plain and before/after with downtime and moved operations."""

from __future__ import annotations

from pathlib import Path

from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.gantt import MOVED_COLOR, gantt_figure, save_gantt
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair


def _patches(fig, gid: str) -> list:
    return [p for ax in fig.axes for p in ax.patches if p.get_gid() == gid]


def test_plain_gantt_png(tmp_path: Path, ft06: Instance) -> None:
    plan = dispatch(ft06, "mwkr")
    out = save_gantt(tmp_path / "g" / "plan.png", ft06, plan)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    fig = gantt_figure(ft06, plan)
    assert len(_patches(fig, "op")) == ft06.num_operations
    assert not _patches(fig, "moved") and not _patches(fig, "downtime")


def test_before_after_marks_downtime_and_moved(tmp_path: Path, ft06: Instance) -> None:
    plan = dispatch(ft06, "mwkr")
    d = Disruption(time=10, events=[MachineBreakdown(machine=2, start=10, duration=8)])
    r = repair(ft06, plan, d, "aor")
    fig = gantt_figure(ft06, r.schedule, before=plan, disruption=d)
    moved = _patches(fig, "moved")
    assert len(moved) == r.moved_operations > 0
    assert all(p.get_edgecolor()[:3] == (214 / 255, 39 / 255, 40 / 255) for p in moved)
    assert MOVED_COLOR == "#d62728"
    assert len(_patches(fig, "downtime")) == 2  # shaded on both panels
    assert len(fig.axes) == 2
    assert save_gantt(tmp_path / "ba.png", ft06, r.schedule, before=plan, disruption=d).stat().st_size > 5000
