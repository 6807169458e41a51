"""How close to the 10 s full re-solve a cheap first edit can start (bench/README.md, issue 17, "First edits"):
AOR and the re-dispatch LCRP takes the better of, against more Giffler-Thompson priorities: the planned start
less a share of the job's work remaining, and the planned start plus Gaussian noise (N draws, sigma 1-5 % of the
plan's makespan), the best kept.

Usage: python scripts/first_edits.py DIR BASE_CSV INSTANCES [--draws N]
  DIR: an `alas bench repair` output directory (its baselines/ and cases/); BASE_CSV: a repair.csv holding the
  same cases' `full` rows. No CP-SAT: dispatches only, so the figures are the same on every run.
Prints per case the full re-solve's makespan, the cheap bound, AOR's, the re-dispatch's and each priority's,
then the means of (LCRP's first edit / full) and (best of all / full).
"""

from __future__ import annotations

import random
import statistics

from kept_cases import full_makespans, kept_cases, probe_parser

from alas_argo.jssp.dispatching import Candidate, Priority, dispatch
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair.bounds import cheap_bound
from alas_argo.jssp.repair.redispatching import redispatch
from alas_argo.jssp.repair.shifting import aor

SHARES = (0.1, 0.25, 0.5)
SIGMAS = (0.01, 0.02, 0.05)


def _makespan(state: ExecutionState, priority: Priority) -> int:
    return dispatch(state.instance, durations=state.durations, release=state.time, fixed=state.frozen_starts(),
                    min_starts=state.min_starts(state.frozen), downtimes=state.downtimes,
                    priority=priority).makespan


def _lead(planned: dict[tuple[int, int], int], share: float) -> Priority:
    def priority(c: Candidate) -> float:
        return planned[(c.job, c.step)] - share * c.work_remaining
    return priority


def _noisy(planned: dict[tuple[int, int], int], noise: dict[tuple[int, int], float]) -> Priority:
    def priority(c: Candidate) -> float:
        return planned[(c.job, c.step)] + noise[(c.job, c.step)]
    return priority


def main() -> int:
    parser = probe_parser(__doc__, effort=False)
    parser.add_argument("--draws", type=int, default=10)
    args = parser.parse_args()
    full = full_makespans(args.base_csv)
    first_ratios: list[float] = []
    best_ratios: list[float] = []
    for name, inst, plan, scenario, seed, disruption in kept_cases(args.directory, args.instances.split(",")):
        state = ExecutionState.at(inst, plan, disruption)
        planned = state.planned_starts()
        first = min(aor(state).makespan, redispatch(state).makespan)
        tried = {f"lead {share}": _makespan(state, _lead(planned, share)) for share in SHARES}
        rng = random.Random(seed)
        draws = []
        for _ in range(args.draws):
            sigma = plan.makespan * rng.choice(SIGMAS)
            draws.append(_makespan(state, _noisy(planned, {k: rng.gauss(0, sigma) for k in planned})))
        tried["noise"] = min(draws)
        reference = full[(name, scenario, seed)]
        best = min(first, *tried.values())
        first_ratios.append(first / reference)
        best_ratios.append(best / reference)
        print(f"{name} {scenario} s{seed}: full {reference}, bound {cheap_bound(state)}, first edit {first} "
              f"({first / reference:.4f}); " + ", ".join(f"{k} {v}" for k, v in tried.items())
              + f"; best {best} ({best / reference:.4f})", flush=True)
    print(f"first edit / full: mean {statistics.mean(first_ratios):.4f}; best of all / full: mean "
          f"{statistics.mean(best_ratios):.4f}; cases improved: "
          f"{sum(b < f for b, f in zip(best_ratios, first_ratios, strict=True))} of {len(first_ratios)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
