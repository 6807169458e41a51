"""LCRP's re-optimizing search alone, one stream against the best of several side by side, on the cases a repair
benchmark kept (bench/README.md, "Search streams"): how far apart a search's random streams end.

Usage: python scripts/search_streams.py DIR BASE_CSV INSTANCES SECONDS [--streams K] [--stream-seconds S2]
  DIR: an `alas bench repair` output directory (its baselines/ and cases/); BASE_CSV: a repair.csv holding the
  same cases' `full` rows; INSTANCES: comma-separated. Each case's search starts from the first edit (the
  shorter of AOR and the re-dispatched plan) with no stretches: one stream of SECONDS nominal seconds, and K
  streams (default 2) of S2 nominal seconds each (default SECONDS), the best kept, as `repair(...,
  streams=K)` runs them. Deterministic limits: the same figures on every run and under any load. Prints per
  case and overall the makespan over full's, and the nominal seconds taken (the streams' longest).
"""

from __future__ import annotations

import argparse
import csv
import statistics
from pathlib import Path

from kept_cases import kept_cases

from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair.bounds import lower_bound
from alas_argo.jssp.repair.lcrp import STREAM_SEED_STEP
from alas_argo.jssp.repair.redispatching import redispatch
from alas_argo.jssp.repair.reoptimizing import reoptimized
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock


def _search(state: ExecutionState, start: Schedule, bound: int, seconds: float, seed: int) -> tuple[int, float]:
    clock = SearchClock()
    found = reoptimized(state, start, seconds=seconds, bound=bound, seed=seed, clock=clock, max_moves=10**6,
                        stretches=0)
    return (found or start).makespan, clock.now()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path)
    parser.add_argument("base_csv", type=Path)
    parser.add_argument("instances")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--streams", type=int, default=2)
    parser.add_argument("--stream-seconds", type=float, default=None)
    args = parser.parse_args()
    each = args.stream_seconds if args.stream_seconds is not None else args.seconds
    full = {(r["instance"], r["scenario"], int(r["seed"])): int(r["makespan"])
            for r in csv.DictReader(args.base_csv.open()) if r["method"] == "full"}
    one: list[float] = []
    best: list[float] = []
    took: tuple[list[float], list[float]] = ([], [])
    for name, inst, plan, scenario, seed, disruption in kept_cases(args.directory, args.instances.split(",")):
        state = ExecutionState.at(inst, plan, disruption)
        bound, reference = lower_bound(state), full[(name, scenario, seed)]
        start = min(aor(state), redispatch(state), key=lambda p: p.makespan)
        makespan, seconds = _search(state, start, bound, args.seconds, seed * 100)
        runs = [_search(state, start, bound, each, seed * 100 + k * STREAM_SEED_STEP) for k in range(args.streams)]
        one.append(makespan / reference)
        best.append(min(m for m, _ in runs) / reference)
        took[0].append(seconds)
        took[1].append(max(s for _, s in runs))
        print(f"{name} {scenario} s{seed}: one {one[-1]:.4f} ({seconds:.2f} s), best of {args.streams} "
              f"{best[-1]:.4f} ({took[1][-1]:.2f} s)", flush=True)
    for label, ratios, spent in ((f"one stream of {args.seconds:g} s", one, took[0]),
                                 (f"best of {args.streams} of {each:g} s", best, took[1])):
        print(f"{label}: makespan/full mean {statistics.mean(ratios):.4f} worst {max(ratios):.4f}; nominal "
              f"seconds median {statistics.median(spent):.3f}, mean {statistics.mean(spent):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
