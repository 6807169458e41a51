"""Disruption sequences whose breakdowns of one machine overlap: how AOR, LCRP and the global re-solve repair them.

Usage:
  PYTHONPATH=TREE python scripts/sequence_overlaps.py dump OUT.json
  python scripts/sequence_overlaps.py compare BEFORE.json AFTER.json

``dump`` draws the sequences `alas run --disrupt KIND --disruptions 3` draws (`generate_sequence`, seeds 0-19,
`breakdown` and `mixed`, on ft06, la01, ta01 and abz5 from their MWKR plans), each disruption committed by AOR
so that the next one is drawn against a plan that honours it, and repairs every disruption in which two
breakdowns of one machine overlap (a sequence carries an unfinished downtime forward, and the same machine can
break down again) with `aor`, `lcrp` and `full` (10 s budget, deterministic limits, seed 0); it writes per
disruption each method's makespan and moved operations, or the error it raised. ``compare`` prints the
failures per method in each dump, and LCRP's makespan and moves against AFTER's `full` on the disruptions both
dumps repaired.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alas_argo.jssp.disruption import Disruption
    from alas_argo.jssp.instance import Instance
    from alas_argo.jssp.schedule import Schedule

INSTANCES = ("ft06", "la01", "ta01", "abz5")
KINDS = ("breakdown", "mixed")
SEEDS = range(20)
METHODS = ("aor", "lcrp", "full")


def dump(out: Path) -> int:
    from alas_argo.errors import AlasError
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.dispatching import dispatch
    from alas_argo.jssp.disruption import generate_sequence
    from alas_argo.jssp.repair import repair

    found: dict[str, dict[str, Any]] = {}
    drawn = 0
    for name in INSTANCES:
        inst = get_instance(name)
        first = dispatch(inst, "mwkr")
        for kind in KINDS:
            for seed in SEEDS:
                pairs: list[tuple[Schedule, Disruption]] = []
                generate_sequence(inst, first, kind, count=3, seed=seed, commit=_committing_aor(inst, pairs))
                for i, (plan, d) in enumerate(pairs):
                    drawn += 1
                    w = sorted((b.machine, b.start, b.end) for b in d.breakdowns)
                    if not any(a[0] == b[0] and b[1] < a[2] for a, b in pairwise(w)):
                        continue
                    row: dict[str, Any] = {}
                    for method in METHODS:
                        try:
                            r = repair(inst, plan, d, method, budget=10, seed=0)
                            row[method] = [r.makespan, r.moved_operations]
                        except AlasError as e:
                            row[method] = type(e).__name__
                    found[f"{name}/{kind}/{seed}/{i}"] = row
    out.write_text(json.dumps(found))
    print(f"{len(found)} of {drawn} disruptions have overlapping breakdowns of one machine; written to {out}")
    return 0


def _committing_aor(inst: Instance, pairs: list[tuple[Schedule, Disruption]]) -> Callable[[Schedule, Disruption],
                                                                                           Schedule]:
    """A sequence's commit: record the plan in force and the disruption, commit AOR's repair."""
    from alas_argo.jssp.repair import repair

    def commit(plan: Schedule, d: Disruption) -> Schedule:
        pairs.append((plan, d))
        return repair(inst, plan, d, "aor").schedule

    return commit


def compare(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> None:
    def ok(v: Any) -> bool:
        return isinstance(v, list)

    for tag, rows in (("before", before), ("after", after)):
        print(tag, {m: dict(Counter("ok" if ok(r[m]) else r[m] for r in rows.values())) for m in METHODS})
    keys = [k for k in after if k in before and ok(after[k]["full"]) and ok(after[k]["lcrp"]) and ok(before[k]["lcrp"])]
    if not keys:
        print("no disruption repaired by both")
        return
    full = {k: after[k]["full"] for k in keys}
    for tag, rows in (("before", before), ("after", after)):
        ratios = [rows[k]["lcrp"][0] / full[k][0] for k in keys]
        moved = sum(rows[k]["lcrp"][1] for k in keys) / max(1, sum(full[k][1] for k in keys))
        print(f"{tag}: lcrp makespan / after's full mean {statistics.mean(ratios):.4f}, worst {max(ratios):.4f}; "
              f"moved / full's {moved:.3f} ({len(keys)} disruptions)")
    aor = [after[k]["aor"][0] / full[k][0] for k in keys]
    print(f"aor makespan / full mean {statistics.mean(aor):.4f}")
    print(f"lcrp after vs before: shorter on {sum(after[k]['lcrp'][0] < before[k]['lcrp'][0] for k in keys)}, "
          f"longer on {sum(after[k]['lcrp'][0] > before[k]['lcrp'][0] for k in keys)}")


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "dump":
        return dump(Path(argv[1]))
    if len(argv) == 3 and argv[0] == "compare":
        compare(json.loads(Path(argv[1]).read_text()), json.loads(Path(argv[2]).read_text()))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
