"""Wall and CPU seconds of repairs on the cases a repair benchmark kept, one at a time (bench/README.md).

Usage: python scripts/repair_timing.py DIR EFFORT INSTANCES [METHOD [TOLERANCE]]
  DIR: a `alas bench repair` output directory (its baselines/ and cases/); INSTANCES: comma-separated;
  TOLERANCE: LCRP's makespan tolerance (default 0).
Repairs run under deterministic limits (the bench's --deterministic), 10 s budget, seed from the case name.
Also prints the nominal seconds the repairs' CP-SAT solves were charged (deterministic time / DTIME_PER_SECOND):
the same on every run and under any load, so two versions of the code can be compared on a shared machine.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from kept_cases import kept_cases

from alas_argo.jssp.repair import repair
from alas_argo.jssp.searching import DTIME_PER_SECOND


def main(argv: list[str]) -> int:
    directory, effort, names = Path(argv[0]), float(argv[1]), argv[2].split(",")
    method = argv[3] if len(argv) > 3 else "lcrp"
    tolerance = float(argv[4]) if len(argv) > 4 else 0.0
    walls, cpus, nominal = [], [], []
    for case in kept_cases(directory, names):
        wall, cpu = time.perf_counter(), time.process_time()
        result = repair(case.instance, case.plan, case.disruption, method, budget=10, seed=case.seed, effort=effort,
                        tolerance=tolerance, deterministic=True)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        nominal.append(result.limits.get("deterministic_time", 0.0) / DTIME_PER_SECOND)
    print(f"{directory} {method} effort {effort:g} tolerance {tolerance:g}, {len(walls)} cases: "
          f"median wall {statistics.median(walls):.3f} s, "
          f"median CPU {statistics.median(cpus):.3f} s, max wall {max(walls):.2f} s, load {os.getloadavg()[0]:.1f}; "
          f"nominal seconds charged median {statistics.median(nominal):.3f}, mean {statistics.mean(nominal):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
