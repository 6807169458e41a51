"""The yardstick of a repair: a time-boxed full re-solve of the same plan in force and disruption.

``alas bench llm --disruptions`` measures every variant's repaired makespan against it (``alas repair --method
full``: CP-SAT over every operation not started, in deterministic time so that a rerun or a replay gets the
same reference). One solve serves every case with the same instance, plan in force and disruption.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import repair
from alas_argo.jssp.schedule import Schedule

__all__ = ["Reference", "References", "reference_for"]


@dataclass(frozen=True)
class Reference:
    """The time-boxed full re-solve a case's makespan is compared with.

    Attributes:
        makespan: The re-solve's makespan.
        note: The solver's status, e.g. ``cp-sat optimal`` (proved) or ``cp-sat feasible`` (time box reached).
    """

    makespan: int
    note: str


#: Full re-solves already made, by (instance, plan in force, disruption).
References = dict[tuple[str, str, str], Reference]


def _digest(doc: Any) -> str:
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def reference_for(instance: Instance, plan: Schedule, disruption: Disruption, *, budget: float,
                  cache: References | None = None) -> Reference:
    """The full re-solve of ``disruption`` on ``plan`` within ``budget`` deterministic seconds (cached by input)."""
    key = (instance.name, _digest(plan.to_json()), _digest(disruption.to_json()))
    if cache is not None and key in cache:
        return cache[key]
    result = repair(instance, plan, disruption, "full", budget=budget, seed=0)
    # The solver's status only ("cp-sat optimal"): the note's seconds would differ between a run and its replay.
    ref = Reference(makespan=result.makespan, note=result.notes[0].split(":")[0] if result.notes else "")
    if cache is not None:
        cache[key] = ref
    return ref
