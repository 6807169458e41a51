"""Wall and CPU seconds of repairs on the cases a repair benchmark kept, one at a time (bench/README.md).

Usage: python scripts/repair_timing.py DIR EFFORT INSTANCES [METHOD]
  DIR: a `alas bench repair` output directory (its baselines/ and cases/); INSTANCES: comma-separated.
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

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.repair import repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import DTIME_PER_SECOND


def main(argv: list[str]) -> int:
    directory, effort, names = Path(argv[0]), float(argv[1]), argv[2].split(",")
    method = argv[3] if len(argv) > 3 else "lcrp"
    walls, cpus, nominal = [], [], []
    for name in names:
        inst = get_instance(name)
        base = Schedule.model_validate_json((directory / "baselines" / f"{name}.json").read_text())
        for case in sorted((directory / "cases" / name).iterdir()):
            disruption = Disruption.model_validate_json(case.read_text())
            seed = int(case.stem.rsplit("-", 1)[1])
            wall, cpu = time.perf_counter(), time.process_time()
            result = repair(inst, base, disruption, method, budget=10, seed=seed, effort=effort, deterministic=True)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
            nominal.append(result.limits.get("deterministic_time", 0.0) / DTIME_PER_SECOND)
    print(f"{directory} {method} effort {effort:g}, {len(walls)} cases: median wall {statistics.median(walls):.3f} s, "
          f"median CPU {statistics.median(cpus):.3f} s, max wall {max(walls):.2f} s, load {os.getloadavg()[0]:.1f}; "
          f"nominal seconds charged median {statistics.median(nominal):.3f}, mean {statistics.mean(nominal):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
