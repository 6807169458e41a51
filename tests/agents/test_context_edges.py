"""Edges of alas_argo.agents.context left open by mutation testing: every context's horizon is the latest of
the release, the fixed operations' ends and the downtimes' ends (at least 0), plus the sum of the current
durations (a disrupted duration counts, not the nominal one); and another job's started work that ends at
the release time, or before, is no busy window (nothing new starts before the release)."""

from __future__ import annotations

from typing import Any

from alas_argo.agents.context import build_job_contexts
from alas_argo.jssp.instance import Instance

TINY_WORK = 22  # the sum of tiny's nine durations


def _horizons(instance: Instance, **kwargs: Any) -> set[int]:
    return {c.horizon for c in build_job_contexts(instance, **kwargs)}


def test_the_horizon_is_the_latest_known_end_plus_all_the_work(tiny: Instance) -> None:
    assert _horizons(tiny) == {TINY_WORK}
    assert _horizons(tiny, release=4) == {4 + TINY_WORK}
    assert _horizons(tiny, durations={(0, 1): 9}) == {TINY_WORK - 2 + 9}
    # The latest end wins, whichever kind it is.
    assert _horizons(tiny, release=4, fixed={(1, 0): (0, 30)}, downtimes=[(2, 5, 12)]) == {30 + TINY_WORK}
    assert _horizons(tiny, release=4, fixed={(1, 0): (0, 30)}, downtimes=[(2, 5, 40)]) == {40 + TINY_WORK}


def test_other_work_that_ends_by_the_release_is_no_busy_window(tiny: Instance) -> None:
    # Job 1's first step runs on machine 0, which job 0 visits too.
    [ended, _, _] = build_job_contexts(tiny, release=5, fixed={(1, 0): (3, 5)})
    assert ended.busy == []
    [running, _, _] = build_job_contexts(tiny, release=5, fixed={(1, 0): (3, 6)})
    assert [(w.machine, w.start, w.end, w.reason) for w in running.busy] == [(0, 3, 6, "reserved")]
