"""The cases an `alas bench repair` output directory kept (its baselines/ and cases/), for the repair probes
(scripts/repair_quality.py, repair_timing.py, repair_headroom.py, first_edits.py)."""

from __future__ import annotations

import argparse
import csv
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule

__all__ = ["KeptCase", "full_makespans", "kept_cases", "probe_parser"]


class KeptCase(NamedTuple):
    """One kept case: the instance, the plan in force (the kept baseline), and the disruption."""

    name: str
    instance: Instance
    plan: Schedule
    scenario: str
    seed: int
    disruption: Disruption


def kept_cases(directory: Path, names: list[str]) -> Iterator[KeptCase]:
    """Every kept case of the named instances, in file-name order; the seed is the case name's suffix."""
    for name in names:
        inst = get_instance(name)
        plan = Schedule.model_validate_json((directory / "baselines" / f"{name}.json").read_text())
        for case in sorted((directory / "cases" / name).iterdir()):
            scenario, seed_text = case.stem.rsplit("-", 1)
            yield KeptCase(name, inst, plan, scenario, int(seed_text),
                           Disruption.model_validate_json(case.read_text()))


def probe_parser(doc: str | None, *, effort: bool = True) -> argparse.ArgumentParser:
    """The arguments every quality probe starts with: DIR BASE_CSV EFFORT INSTANCES (no EFFORT for the probes that
    run no repair)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", type=Path)
    parser.add_argument("base_csv", type=Path)
    if effort:
        parser.add_argument("effort", type=float)
    parser.add_argument("instances")
    return parser


def full_makespans(base_csv: Path) -> dict[tuple[str, str, int], int]:
    """The `full` rows' makespans of a repair.csv, by (instance, scenario, seed)."""
    with base_csv.open() as f:
        return {(r["instance"], r["scenario"], int(r["seed"])): int(r["makespan"])
                for r in csv.DictReader(f) if r["method"] == "full"}
