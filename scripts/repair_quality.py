"""LCRP's makespan and moved operations on the cases a repair benchmark kept, against its kept full and
full-stable rows (bench/README.md, issue 17): the quick probe behind the issue-17 tuning.

Usage: python scripts/repair_quality.py DIR BASE_CSV EFFORT INSTANCES [--tolerance T] [--seed-offset N]
                                          [--streams S] [--first-edit {redispatch,tabu}] [--verbose]
  DIR: an `alas bench repair` output directory (its baselines/ and cases/); BASE_CSV: a repair.csv holding the
  same cases' `full` and `full-stable` rows; INSTANCES: comma-separated; T: LCRP's makespan tolerance (0).
Repairs run under deterministic limits (the bench's --deterministic), 10 s budget, seed from the case name
(plus --seed-offset, to see whether a change's gain is one random stream's luck), LCRP's search on S streams
side by side (default 1), from the first edit named by --first-edit (LCRP's default, redispatch, or tabu: the
compiled tabu search, which must be built), so the figures are the same on every run and under any
load. Prints per family: mean and worst makespan / full, moved operations / full's
and / full-stable's (sums over the cases); the cases above 2 %; the nominal seconds a repair took (streams side
by side counted once) and the work its solves were charged (every stream counted); how many repairs went global
(a global_reason) and the machines they touched.
"""

from __future__ import annotations

import csv
import statistics
from collections import defaultdict

from kept_cases import kept_cases, probe_parser

from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit, repair
from alas_argo.jssp.repair.tabu import kernel
from alas_argo.jssp.searching import DTIME_PER_SECOND


def main() -> int:
    parser = probe_parser(__doc__)
    parser.add_argument("--seed-offset", type=int, default=0)
    parser.add_argument("--tolerance", type=float, default=0.0)
    parser.add_argument("--streams", type=int, default=1)
    parser.add_argument("--first-edit", choices=[e.value for e in FirstEdit], default=DEFAULT_FIRST_EDIT.value)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    if args.first_edit == FirstEdit.TABU and kernel() is None:
        parser.error("--first-edit tabu: the compiled tabu search is not built (pip install -e . with a C compiler)")
    base = {(r["instance"], r["scenario"], int(r["seed"]), r["method"]): r
            for r in csv.DictReader(args.base_csv.open())}
    ratios: dict[str, list[float]] = defaultdict(list)
    moved: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    nominal: list[float] = []
    work: list[float] = []
    over: list[str] = []
    went_global: list[bool] = []
    touched: list[int] = []
    for name, inst, plan, scenario, seed, disruption in kept_cases(args.directory, args.instances.split(",")):
        r = repair(inst, plan, disruption, "lcrp", budget=10, seed=seed + args.seed_offset, effort=args.effort,
                   tolerance=args.tolerance, deterministic=True, streams=args.streams, first_edit=args.first_edit)
        work.append(r.limits.get("deterministic_time", 0.0) / DTIME_PER_SECOND)
        nominal.append(r.limits.get("nominal_seconds", work[-1]))
        went_global.append(r.global_reason is not None)
        touched.append(len(r.touched_machines))
        full, stable = base[(name, scenario, seed, "full")], base[(name, scenario, seed, "full-stable")]
        ratio = r.makespan / int(full["makespan"])
        for key in (scenario, "all"):
            ratios[key].append(ratio)
            counts = moved[key]
            counts[0] += r.moved_operations
            counts[1] += int(full["moved_operations"])
            counts[2] += int(stable["moved_operations"])
        if ratio > 1.02:
            over.append(f"{name} {scenario} s{seed} {ratio:.4f}")
        if args.verbose:
            print(f"{name} {scenario} s{seed}: {r.makespan} (full {full['makespan']}, {ratio:.4f}), moved "
                  f"{r.moved_operations} (full {full['moved_operations']}), valid {r.valid}, "
                  f"{nominal[-1]:.3f} nominal s", flush=True)
    for key in sorted(ratios, key=lambda k: (k == "all", k)):
        m = moved[key]
        print(f"{key:16s} makespan/full mean {statistics.mean(ratios[key]):.4f} worst {max(ratios[key]):.4f}; "
              f"moved/full {m[0] / max(1, m[1]):.3f}, /full-stable {m[0] / max(1, m[2]):.3f}")
    print(f"above 2 %: {len(over)} {over}")
    print(f"locality: {sum(went_global)} of {len(went_global)} repairs went global; machines touched mean "
          f"{statistics.mean(touched):.1f}")
    print(f"nominal seconds taken: median {statistics.median(nominal):.3f}, mean {statistics.mean(nominal):.3f}; "
          f"work charged: median {statistics.median(work):.3f}, mean {statistics.mean(work):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
