"""Do two versions of the code repair the same way? LCRP's plans on every kept case, dumped, then compared.

Usage:
  PYTHONPATH=TREE python scripts/repair_identity.py dump OUT.json EFFORTS DIR [DIR ...]
  python scripts/repair_identity.py compare A.json B.json

``dump`` repairs every case a repair benchmark kept (DIR: an `alas bench repair` output directory, its
baselines/ and cases/; every instance found there) at each of EFFORTS (comma-separated) under deterministic
limits, 10 s budget, seed from the case name, as `scripts/repair_timing.py` does, and writes per repair the
schedule, its metrics, the notes, the deterministic time charged and the count of solves. ``compare`` prints the
repairs whose plan (operations, makespan, moved count) differs, then every other field that differs; the wall
seconds in the cascade's note are masked (wall time, not a result). Exit status 0 when everything is identical.
Run ``dump`` once per tree (e.g. main's from ``git archive COMMIT | tar -x -C DIR``), then ``compare``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

WALL = re.compile(r"(bound \d+), [0-9.]+ s\)")


def dump(out: Path, efforts: list[float], directories: list[Path]) -> int:
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.disruption import Disruption
    from alas_argo.jssp.repair import repair
    from alas_argo.jssp.schedule import Schedule

    found: dict[str, dict[str, Any]] = {}
    for effort in efforts:
        for directory in directories:
            for cases in sorted(p for p in (directory / "cases").iterdir() if p.is_dir()):
                inst = get_instance(cases.name)
                base = Schedule.model_validate_json((directory / "baselines" / f"{cases.name}.json").read_text())
                for case in sorted(cases.iterdir()):
                    disruption = Disruption.model_validate_json(case.read_text())
                    seed = int(case.stem.rsplit("-", 1)[1])
                    r = repair(inst, base, disruption, "lcrp", budget=10, seed=seed, effort=effort,
                               deterministic=True)
                    found[f"{effort:g}/{directory.name}/{cases.name}/{case.stem}"] = {
                        "ops": sorted((o.job, o.step, o.machine, o.start, o.end) for o in r.schedule.operations),
                        "makespan": r.makespan, "moved": r.moved_operations, "shift": r.total_start_shift,
                        "wip": r.wip_moved, "radius": r.edit_radius, "machines": r.edit_machines,
                        "global": r.global_reason, "fallback": r.fallback, "notes": r.notes,
                        "dtime": r.limits.get("deterministic_time"), "solves": r.limits.get("solves")}
    out.write_text(json.dumps(found))
    print(f"{len(found)} repairs written to {out}")
    return 0


def compare(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> tuple[list[str], dict[str, list[str]]]:
    """The repairs whose plan differs, and per field the repairs where it differs (cascade wall time masked)."""
    if a.keys() != b.keys():
        raise SystemExit(f"not the same repairs: {len(a)} and {len(b)}, {len(a.keys() ^ b.keys())} unmatched")

    def plan(r: dict[str, Any]) -> tuple[Any, ...]:
        return r["ops"], r["makespan"], r["moved"]

    def masked(r: dict[str, Any]) -> dict[str, Any]:
        return {**r, "notes": [WALL.sub(r"\1, <wall> s)", n) for n in r["notes"]]}

    plans = [k for k in a if plan(a[k]) != plan(b[k])]
    fields: dict[str, list[str]] = {}
    for k in a:
        x, y = masked(a[k]), masked(b[k])
        for f in x:
            if x[f] != y.get(f):
                fields.setdefault(f, []).append(k)
    return plans, fields


def main(argv: list[str]) -> int:
    if argv[:1] == ["dump"] and len(argv) >= 4:
        return dump(Path(argv[1]), [float(e) for e in argv[2].split(",")], [Path(d) for d in argv[3:]])
    if argv[:1] == ["compare"] and len(argv) == 3:
        a, b = (json.loads(Path(p).read_text()) for p in argv[1:])
        plans, fields = compare(a, b)
        print(f"{len(a)} repairs: {len(plans)} with another plan, makespan or moved count")
        for k in plans:
            print(f"  {k}: makespan {a[k]['makespan']} -> {b[k]['makespan']}, moved {a[k]['moved']} -> "
                  f"{b[k]['moved']}")
        for f, keys in fields.items():
            print(f"  field {f!r} differs on {len(keys)}: {', '.join(keys[:4])}{' ...' if len(keys) > 4 else ''}")
        print("identical" if not fields else "not identical")
        return 0 if not fields else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
