"""How many fewer moves a longer count solve finds after LCRP, at LCRP's makespan or a tolerance above it
(bench/README.md, issue 17: "More ways to fewer moves").

Usage: python scripts/repair_headroom.py DIR BASE_CSV EFFORT INSTANCES SECONDS [--slack S,...] [--free all|moved]
                                            [--of lcrp|full] [--lns K [--per P] [--shape S [--window W]]]
  DIR: an `alas bench repair` output directory (its baselines/ and cases/); BASE_CSV: a repair.csv holding the
  same cases' `full` rows; INSTANCES: comma-separated; SECONDS: the count solve's nominal seconds.
For each case: LCRP (deterministic, 10 s budget, seed from the case name), then one count-only CP-SAT solve
(:func:`alas_argo.jssp.repair.subproblem.fewest_moves`, work in progress weighted as LCRP weighs it) hinted with
LCRP's plan, with every free operation free (``--free all``) or only those LCRP moved, at a makespan of at most
LCRP's times (1 + S) (with ``--of full``, the kept `full` row's times (1 + S): what stability a repair could buy
without ending after a 10 s global re-solve; a case LCRP ended after that limit keeps LCRP's plan, uncounted);
the result settled and kept when valid and moving fewer. Prints per case and, per slack,
the mean makespan / full and the moved operations / full's (sums over the cases).
With ``--lns K`` the SECONDS are a large-neighbourhood search instead (bench/README.md, "A count by
neighbourhoods"): that one count for 40 % of them, then count solves of at most P nominal seconds each (default
0.2) in which only the operations the plan moves and every free operation of K random jobs may move, each kept
when its weighted count is no higher, until the SECONDS are spent. ``--shape`` picks other neighbourhoods
(bench/README.md, "Neighbourhood shapes"): ``related`` (K jobs tied to a random moved operation), ``machines`` (K
random machines' free operations), ``window`` (a time window holding W of the free operations, default 0.3, at
a random moved operation's planned start), ``moved-window`` (that window and the moved operations) and ``mixed``
(one of ``jobs``, ``window``, ``moved-window`` per solve).
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
from collections.abc import Mapping

from kept_cases import kept_cases, probe_parser

from alas_argo.errors import InfeasibleError, NoSolutionError
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.repair.metrics import moved_operations
from alas_argo.jssp.repair.resolving import disrupted_request
from alas_argo.jssp.repair.stabilizing import MIN_SECONDS, WIP_WEIGHT, settled, weighted_moves
from alas_argo.jssp.repair.subproblem import fewest_moves
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock
from alas_argo.jssp.validate import validate

#: The share of the SECONDS the first count over every editable operation gets under ``--lns``.
LNS_FIRST = 0.4


def _by_neighbourhoods(state: ExecutionState, plan: Schedule, limit: int, args: argparse.Namespace,
                       seed: int) -> Schedule:
    """Count solves over the moved operations and K random jobs' free operations, until the SECONDS (counted on a
    deterministic clock from after the first count) are spent."""
    planned, weights = state.planned_starts(), dict.fromkeys(state.wip(), WIP_WEIGHT)
    jobs, rng, clock = sorted({j for j, _ in state.free}), random.Random(seed), SearchClock()
    seconds = args.seconds * (1 - LNS_FIRST)
    current = plan
    machines = sorted({state.instance.machine(*k) for k in state.free})
    while (left := seconds - clock.now()) >= MIN_SECONDS:
        starts = current.starts()
        editable = _neighbourhood(state, current, starts, planned, args, rng, jobs, machines)
        request = disrupted_request(state, pins={k: starts[k] for k in state.free - editable}, hint=current,
                                    seed=rng.randrange(1 << 30), workers=1, time_limit=min(args.per, left),
                                    makespan_limit=limit, clock=clock)
        try:
            found = fewest_moves(request, planned, weights)
        except (InfeasibleError, NoSolutionError):
            found = None
        if found is not None and weighted_moves(state, found) <= weighted_moves(state, current):
            current = found
    return current


def _neighbourhood(state: ExecutionState, current: Schedule, starts: Mapping[Key, int], planned: Mapping[Key, int],
                   args: argparse.Namespace, rng: random.Random, jobs: list[int], machines: list[int]) -> set[Key]:
    """The operations one count solve may move, by ``--shape`` (``starts``: ``current``'s)."""
    moved = {k for k in state.free if starts[k] != planned[k]}
    shape = args.shape if args.shape != "mixed" else rng.choice(("jobs", "window", "moved-window"))
    if shape == "jobs":
        picked = set(rng.sample(jobs, min(args.lns, len(jobs))))
        return {k for k in state.free if k[0] in picked} | moved
    if shape == "related":
        # Jobs tied to a random moved operation: its own, then those of the operations next to it on its
        # machine in the plan, widening until K jobs.
        tied: set[int] = set()
        order = current.machine_sequences()
        position = {k: (m, i) for m, seq in order.items() for i, k in enumerate(seq)}
        seeds = sorted(moved) if moved else sorted(state.free)
        while len(tied) < min(args.lns, len(jobs)):
            k = rng.choice(seeds)
            tied.add(k[0])
            m, i = position[k]
            for d in (1, -1, 2, -2):
                if 0 <= i + d < len(order[m]) and len(tied) < args.lns:
                    tied.add(order[m][i + d][0])
        return {k for k in state.free if k[0] in tied} | moved
    if shape == "machines":
        chosen = set(rng.sample(machines, min(args.lns, len(machines))))
        return {k for k in state.free if state.instance.machine(*k) in chosen} | moved
    # A time window over the free operations, placed at a random moved operation's planned start (or anywhere
    # when none moves), wide enough to hold ``args.window`` of them.
    keys = sorted(state.free, key=lambda k: planned[k])
    size = max(1, int(len(keys) * args.window))
    anchor = planned[rng.choice(sorted(moved))] if moved else planned[rng.choice(keys)]
    centre = min(range(len(keys)), key=lambda i: abs(planned[keys[i]] - anchor))
    lo = max(0, min(centre - size // 2, len(keys) - size))
    window = set(keys[lo:lo + size])
    return window | moved if shape == "moved-window" else window


def main() -> int:
    parser = probe_parser(__doc__)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--slack", default="0")
    parser.add_argument("--free", choices=("all", "moved"), default="all")
    parser.add_argument("--lns", type=int, default=0, metavar="K")
    parser.add_argument("--per", type=float, default=0.2, metavar="P")
    parser.add_argument("--shape", default="jobs",
                        choices=("jobs", "related", "machines", "window", "moved-window", "mixed"))
    parser.add_argument("--window", type=float, default=0.3, metavar="W")
    parser.add_argument("--of", choices=("lcrp", "full"), default="lcrp")
    args = parser.parse_args()
    slacks = [float(x) for x in args.slack.split(",")]
    base = {(r["instance"], r["scenario"], int(r["seed"])): r for r in csv.DictReader(args.base_csv.open())
            if r["method"] == "full"}
    lcrp_ratios: list[float] = []
    lcrp_moved = full_moved = 0
    found: dict[float, tuple[list[float], list[int]]] = {s: ([], []) for s in slacks}
    for name, inst, plan, scenario, seed, disruption in kept_cases(args.directory, args.instances.split(",")):
        r = repair(inst, plan, disruption, "lcrp", budget=10, seed=seed, effort=args.effort, deterministic=True)
        state = ExecutionState.at(inst, plan, disruption)

        def is_valid(p: Schedule, i: Instance = inst, d: Disruption = disruption, b: Schedule = plan) -> bool:
            return validate(i, p, disruption=d, baseline=b).valid

        full = base[(name, scenario, seed)]
        full_makespan, moved_by_full = int(full["makespan"]), int(full["moved_operations"])
        lcrp_ratios.append(r.makespan / full_makespan)
        lcrp_moved += r.moved_operations
        full_moved += moved_by_full
        starts, planned = r.schedule.starts(), state.planned_starts()
        editable = set(state.free) if args.free == "all" else {k for k in state.free if starts[k] != planned[k]}
        line = [f"{name} {scenario} s{seed}: lcrp {r.makespan} (full {full_makespan}) moved {r.moved_operations}"
                f" (full {moved_by_full})"]
        for slack in slacks:
            limit = int((r.schedule.makespan if args.of == "lcrp" else full_makespan) * (1 + slack))
            if limit < r.schedule.makespan:
                found[slack][0].append(r.makespan / full_makespan)
                found[slack][1].append(r.moved_operations)
                line.append(f"slack {slack}: lcrp ended after {limit}, uncounted")
                continue
            request = disrupted_request(state, pins={k: starts[k] for k in state.free - editable},
                                        hint=r.schedule, seed=seed, workers=1,
                                        time_limit=args.seconds * (LNS_FIRST if args.lns else 1),
                                        makespan_limit=limit, clock=SearchClock())
            counted = fewest_moves(request, planned, dict.fromkeys(state.wip(), WIP_WEIGHT))
            if args.lns and counted is not None:
                counted = _by_neighbourhoods(state, counted, limit, args, seed)
            best = r.schedule
            if counted is not None:
                candidate = settled(state, counted, limit, set(), is_valid)
                if is_valid(candidate) and moved_operations(plan, candidate) < r.moved_operations:
                    best = candidate
            found[slack][0].append(best.makespan / full_makespan)
            found[slack][1].append(moved_operations(plan, best))
            line.append(f"slack {slack}: {best.makespan} moved {moved_operations(plan, best)}")
        print("; ".join(line), flush=True)
    print(f"lcrp: makespan/full {statistics.mean(lcrp_ratios):.4f}, moved/full {lcrp_moved / max(1, full_moved):.3f}")
    for slack, (ratios, moved) in found.items():
        print(f"count ({args.free} free, {args.seconds} s) at slack {slack} of {args.of}'s makespan: "
              f"makespan/full {statistics.mean(ratios):.4f} worst {max(ratios):.4f}, "
              f"moved/full {sum(moved) / max(1, full_moved):.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
