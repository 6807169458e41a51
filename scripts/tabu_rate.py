"""The compiled tabu search's CPU per iteration and free operation on kept cases: the rate LCRP's tabu first edit
is charged at on a deterministic clock (``alas_argo.jssp.repair.tabu.SECONDS_PER_OPERATION_ITERATION``).

Usage: python scripts/tabu_rate.py DIR INSTANCES [--iterations N] [--verbose]
  DIR: an `alas bench repair` output directory (its baselines/ and cases/); INSTANCES: comma-separated.
Each case: LCRP's first edit (AOR, or the re-dispatched plan when shorter), then one search of N iterations
(10,000) with the case's seed; CPU seconds (process_time) around the search, its conversions included. Prints the
median and mean CPU per iteration and free operation over the searches that ran 1,000 iterations or more (one that
reaches the bound at once is all fixed cost), and whether every plan passed the validator.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from kept_cases import kept_cases

from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair.bounds import lower_bound
from alas_argo.jssp.repair.redispatching import redispatch
from alas_argo.jssp.repair.reoptimizing import FreeSequences
from alas_argo.jssp.repair.shifting import aor
from alas_argo.jssp.repair.tabu import ITERATIONS, tabu_search
from alas_argo.jssp.validate import validate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path)
    parser.add_argument("instances")
    parser.add_argument("--iterations", type=int, default=ITERATIONS)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    rates: list[float] = []
    invalid = 0
    for name, inst, plan, scenario, seed, disruption in kept_cases(args.directory, args.instances.split(",")):
        state = ExecutionState.at(inst, plan, disruption)
        first, again = aor(state), redispatch(state)
        first = again if again.makespan < first.makespan else first
        free = FreeSequences(state, first)
        began = time.process_time()
        found = tabu_search(free, bound=lower_bound(state), seed=seed, iterations=args.iterations)
        cpu = time.process_time() - began
        if found is None:
            parser.error("the compiled tabu search is not built (pip install -e . with a C compiler)")
        valid = validate(inst, found.sequences.to_schedule(), disruption=disruption, baseline=plan).valid
        invalid += not valid
        if found.iterations >= 1000:
            rates.append(cpu / found.iterations / len(free.keys))
        if args.verbose:
            print(f"{name} {scenario} s{seed}: {len(free.keys)} free, {first.makespan} -> {found.makespan}, "
                  f"{found.iterations} iterations, {cpu:.3f} CPU s, valid {valid}", flush=True)
    print(f"CPU per iteration and free operation over {len(rates)} searches: median "
          f"{statistics.median(rates):.3g} s, mean {statistics.mean(rates):.3g} s; invalid plans {invalid}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
