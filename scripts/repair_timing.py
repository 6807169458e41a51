"""Wall and CPU seconds of repairs on the cases a repair benchmark kept, one at a time (bench/README.md).

Usage: python scripts/repair_timing.py DIR EFFORT INSTANCES [METHOD [TOLERANCE [FIRST_EDIT]]]
  DIR: a `alas bench repair` output directory (its baselines/ and cases/); INSTANCES: comma-separated;
  TOLERANCE: LCRP's makespan tolerance (default 0); FIRST_EDIT: LCRP's first edit, redispatch (default) or tabu.
Repairs run under deterministic limits (the bench's --deterministic), 10 s budget, seed from the case name.
Also prints the nominal seconds the repairs' CP-SAT solves were charged (deterministic time / DTIME_PER_SECOND):
the same on every run and under any load, so two versions of the code can be compared on a shared machine;
and the repair clock's own nominal seconds, which also count work charged outside CP-SAT (the tabu first edit).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from kept_cases import kept_cases

from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, repair
from alas_argo.jssp.searching import DTIME_PER_SECOND


def main(argv: list[str]) -> int:
    directory, effort, names = Path(argv[0]), float(argv[1]), argv[2].split(",")
    method = argv[3] if len(argv) > 3 else "lcrp"
    tolerance = float(argv[4]) if len(argv) > 4 else 0.0
    first_edit = argv[5] if len(argv) > 5 else DEFAULT_FIRST_EDIT.value
    walls, cpus, nominal, clock = [], [], [], []
    for case in kept_cases(directory, names):
        wall, cpu = time.perf_counter(), time.process_time()
        result = repair(case.instance, case.plan, case.disruption, method, budget=10, seed=case.seed, effort=effort,
                        tolerance=tolerance, deterministic=True, first_edit=first_edit)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        nominal.append(result.limits.get("deterministic_time", 0.0) / DTIME_PER_SECOND)
        clock.append(result.limits.get("nominal_seconds", nominal[-1]))
    print(f"{directory} {method} effort {effort:g} tolerance {tolerance:g} first edit {first_edit}, "
          f"{len(walls)} cases: "
          f"median wall {statistics.median(walls):.3f} s, "
          f"median CPU {statistics.median(cpus):.3f} s, max wall {max(walls):.2f} s, load {os.getloadavg()[0]:.1f}; "
          f"nominal seconds charged median {statistics.median(nominal):.3f}, mean {statistics.mean(nominal):.3f}; "
          f"clock median {statistics.median(clock):.3f}, mean {statistics.mean(clock):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
