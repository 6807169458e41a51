"""Bounded contexts and the heuristic job agent."""

from __future__ import annotations

from alas_argo.agents.context import build_job_contexts
from alas_argo.agents.contracts import BusyWindow, JobContext, PlannerBackend
from alas_argo.agents.heuristic import HeuristicPlanner, earliest_fit
from alas_argo.jssp.instance import Instance


def test_context_holds_only_own_job_and_visited_machines(ft06: Instance) -> None:
    fixed = {(1, 0): (0, 8), (2, 0): (0, 5)}  # job 1 on machine 1, job 2 on machine 2
    ctxs = build_job_contexts(ft06, release=4, fixed=fixed, downtimes=[(0, 10, 20), (5, 3, 9)])
    assert [c.job for c in ctxs] == list(range(6))
    c0 = ctxs[0]
    assert c0.operations == ft06.jobs[0]
    visited = {m for m, _ in ft06.jobs[0]}
    assert all(w.machine in visited for w in c0.busy)
    assert {(w.machine, w.start, w.end, w.reason) for w in c0.busy} == {
        (0, 10, 20, "downtime"), (5, 3, 9, "downtime"), (1, 0, 8, "reserved"), (2, 0, 5, "reserved")}
    assert ctxs[1].fixed == {0: (0, 8)}
    assert all(w.reason != "reserved" or w.machine != 1 for w in ctxs[1].busy)  # own op is not "other work"


def test_durations_override_and_feedback(tiny: Instance) -> None:
    ctxs = build_job_contexts(tiny, durations={(0, 1): 9}, feedback={0: ["overlap"]}, attempt=2)
    assert ctxs[0].operations[1] == (1, 9) and ctxs[0].feedback == ["overlap"] and ctxs[0].attempt == 2
    assert ctxs[1].feedback == []


def test_earliest_fit() -> None:
    windows = [(2, 5), (7, 9), (20, 30)]
    assert earliest_fit(windows, 0, 2) == 0
    assert earliest_fit(windows, 0, 3) == 9
    assert earliest_fit(windows, 5, 2) == 5
    assert earliest_fit(windows, 6, 2) == 9
    assert earliest_fit(windows, 9, 12) == 30


def test_heuristic_chain_avoids_busy_and_keeps_fixed() -> None:
    ctx = JobContext(instance="x", job=0, operations=[(0, 3), (1, 2), (0, 4)], release=1,
                     fixed={0: (0, 3)},
                     busy=[BusyWindow(machine=1, start=3, end=6), BusyWindow(machine=0, start=8, end=10)],
                     horizon=100)
    planner = HeuristicPlanner()
    assert isinstance(planner, PlannerBackend)
    p = planner.propose(ctx)
    assert [(o.step, o.machine, o.start, o.end) for o in p.operations] == [(0, 0, 0, 3), (1, 1, 6, 8), (2, 0, 10, 14)]
    assert p.backend == "heuristic"
