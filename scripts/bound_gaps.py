"""How far the `full` re-solve's makespan lies above LCRP's lower bounds on the cases a repair benchmark kept
(bench/README.md, "A tighter lower bound"): the cheap bound (job chains, machine loads) and the larger of it and
the one-machine bound with heads and tails.

Usage: python scripts/bound_gaps.py DIR BASE_CSV INSTANCES [--verbose]
"""

from __future__ import annotations

import statistics

from kept_cases import full_makespans, kept_cases, probe_parser

from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair.bounds import cheap_bound, lower_bound


def main() -> int:
    parser = probe_parser(__doc__, effort=False)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    full = full_makespans(args.base_csv)
    cheap_gaps, tight_gaps, proven = [], [], 0
    for name, inst, plan, scenario, seed, disruption in kept_cases(args.directory, args.instances.split(",")):
        state = ExecutionState.at(inst, plan, disruption)
        makespan, cheap, tight = full[(name, scenario, seed)], cheap_bound(state), lower_bound(state)
        cheap_gaps.append(makespan / cheap - 1)
        tight_gaps.append(makespan / tight - 1)
        proven += makespan == tight
        if args.verbose:
            print(f"{name} {scenario} s{seed}: full {makespan}, cheap {cheap} ({cheap_gaps[-1]:+.3f}), "
                  f"tight {tight} ({tight_gaps[-1]:+.3f})")
    print(f"{len(cheap_gaps)} cases: full above the cheap bound by {statistics.mean(cheap_gaps):.4f} on average "
          f"(worst {max(cheap_gaps):.4f}), above the tighter bound by {statistics.mean(tight_gaps):.4f} "
          f"(worst {max(tight_gaps):.4f}); full at the tighter bound on {proven}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
