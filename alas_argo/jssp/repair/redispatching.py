"""Re-dispatching the free operations in the order of the plan in force: a cheap first edit that may re-sequence.

A sequence-keeping repair (AOR) leaves every machine idle where the disruption made the next planned
operation late. Giffler-Thompson with the planned start as the priority builds an *active* schedule
instead: an operation that is ready may take such a gap, so the plan mostly keeps its order but closes the
holes. Measured on 50x20 disruptions (near-optimal plans, 18 cases), LCRP starting from the better of the
two ends 0.93 % above a 10 s global re-solve instead of 1.45 %, moving as many operations; on 20x15 the
cascade solve finds as much either way.
"""

from __future__ import annotations

from alas_argo.jssp.dispatching import Candidate, dispatch
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.schedule import Schedule

__all__ = ["redispatch"]


def redispatch(state: ExecutionState) -> Schedule:
    """An active schedule of the free operations in their planned order (frozen ones where they are)."""
    planned = state.planned_starts()

    def planned_first(c: Candidate) -> float:
        return planned[(c.job, c.step)]

    return dispatch(state.instance, durations=state.durations, release=state.time, fixed=state.frozen_starts(),
                    min_starts=state.min_starts(state.frozen), downtimes=state.downtimes, priority=planned_first)
