"""Cheap first edits against the `full` re-solve's makespan on the cases a repair benchmark kept (bench/README.md,
"Probes of 2026-12-05, second session"): LCRP's own (AOR, the planned-order re-dispatch) and Giffler-Thompson
schedules of the free operations under dispatching rules, as a start for the re-optimizing search.

Usage: python scripts/first_edits.py DIR BASE_CSV INSTANCES [--verbose]
Prints per edit the range and mean of makespan / full over the cases.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable

from kept_cases import full_makespans, kept_cases, probe_parser

from alas_argo.jssp.dispatching import Candidate, dispatch
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair.redispatching import redispatch
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.schedule import Schedule

RULES = ("mwkr", "mopnr", "fifo", "spt")


def _edits(state: ExecutionState) -> dict[str, Schedule]:
    planned = state.planned_starts()

    def blend(c: Candidate) -> float:
        # The plan's order, bent towards the jobs with the most work left.
        return planned[(c.job, c.step)] - 0.5 * c.work_remaining

    def rule(name: str, priority: Callable[[Candidate], float] | None = None) -> Schedule:
        return dispatch(state.instance, name, durations=state.durations, release=state.time,
                        fixed=state.frozen_starts(), min_starts=state.min_starts(state.frozen),
                        downtimes=state.downtimes, priority=priority)

    first = min(aor(state), redispatch(state), key=lambda s: s.makespan)
    return {"lcrp first edit": first, **{r: rule(r) for r in RULES}, "planned / work blend": rule("mwkr", blend)}


def main() -> int:
    parser = probe_parser(__doc__, effort=False)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    full = full_makespans(args.base_csv)
    ratios: dict[str, list[float]] = defaultdict(list)
    for case in kept_cases(args.directory, args.instances.split(",")):
        reference = full[(case.name, case.scenario, case.seed)]
        edits = _edits(ExecutionState.at(case.instance, case.plan, case.disruption))
        for name, plan in edits.items():
            ratios[name].append(plan.makespan / reference)
        if args.verbose:
            print(f"{case.name} {case.scenario} s{case.seed}: full {reference}; "
                  + ", ".join(f"{n} {p.makespan / reference:.3f}" for n, p in edits.items()))
    for name, values in ratios.items():
        print(f"{name:22s} makespan / full {min(values):.3f}-{max(values):.3f}, mean {statistics.mean(values):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
