"""The repair methods behind one interface: an enum of names and a factory of strategies."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Protocol

from alas_argo.errors import InfeasibleError, InputError, NoSolutionError
from alas_argo.jssp.execution import ExecutionState
from alas_argo.jssp.repair.lcrp import lcrp
from alas_argo.jssp.repair.metrics import moved_keys
from alas_argo.jssp.repair.resolving import full, full_stable
from alas_argo.jssp.repair.result import RepairOutcome
from alas_argo.jssp.repair.shifting import aor, right_shift
from alas_argo.jssp.repair.tabu import DEFAULT_FIRST_EDIT, FirstEdit
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.searching import SearchClock

__all__ = ["RepairMethod", "Repairer", "get_repairer"]


class RepairMethod(StrEnum):
    """The repair methods, from the most conservative to the most global."""

    RIGHT_SHIFT = "right-shift"  #: keep every machine sequence, push later operations right
    AOR = "aor"  #: affected-operations rescheduling: delay only what the disruption reaches
    FULL = "full"  #: CP-SAT re-solve of every free operation (makespan)
    FULL_STABLE = "full-stable"  #: the same, then the least total start shift at that makespan
    LCRP = "lcrp"  #: localized cascading repair (docs/lcrp.md)

    @classmethod
    def parse(cls, value: RepairMethod | str) -> RepairMethod:
        """The method named ``value``; an InputError listing the known names otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise InputError(f"unknown repair method {value!r}; known: "
                             f"{', '.join(m.value for m in cls)}") from None

    @property
    def searches(self) -> bool:
        """Whether the method runs a time-limited CP-SAT search, so that its plan can depend on the limits."""
        return self in (RepairMethod.FULL, RepairMethod.FULL_STABLE, RepairMethod.LCRP)


class Repairer(Protocol):
    """One repair strategy: an execution state in, a repaired plan and its neighbourhood out.

    ``effort`` scales LCRP's time box, ``tolerance`` lets it trade makespan for fewer moves and ``first_edit``
    chooses where it starts (:class:`.tabu.FirstEdit`); the other methods take their budget as it is and ignore
    all three. Every solve
    is charged to ``clock``, which also says how budgets are counted (deterministic time by default).
    """

    def __call__(self, state: ExecutionState, *, budget: float, seed: int, workers: int,
                 is_valid: Callable[[Schedule], bool], effort: float = 1.0,
                 tolerance: float = 0.0, clock: SearchClock | None = None,
                 first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT) -> RepairOutcome: ...


def _shifting(method: Callable[[ExecutionState], Schedule]) -> Repairer:
    def run(state: ExecutionState, *, budget: float, seed: int, workers: int,
            is_valid: Callable[[Schedule], bool], effort: float = 1.0, tolerance: float = 0.0,
            clock: SearchClock | None = None, first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT) -> RepairOutcome:
        plan = method(state)
        # A sequence-keeping repair may touch exactly what it moved (plus what it had to restart).
        return RepairOutcome(plan, moved_keys(state.baseline, plan) | state.interrupted)
    return run


def _resolving(stable: bool) -> Repairer:
    def run(state: ExecutionState, *, budget: float, seed: int, workers: int,
            is_valid: Callable[[Schedule], bool], effort: float = 1.0, tolerance: float = 0.0,
            clock: SearchClock | None = None, first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT) -> RepairOutcome:
        hint = aor(state)
        solve = full_stable if stable else full
        try:
            result = solve(state, hint, budget=budget, seed=seed, workers=workers, clock=clock)
        except NoSolutionError:
            return RepairOutcome(hint, set(state.free), fallback=True,
                                 notes=["no CP-SAT solution in time; the AOR warm start stands"],
                                 global_reason="a global re-solve: every free operation may move")
        except InfeasibleError as e:
            raise InfeasibleError(f"the disrupted problem has no solution: {e.message}", where=e.where) from e
        return RepairOutcome(result.schedule, set(state.free),
                             notes=[f"cp-sat {result.status.value}: makespan {result.objective}, "
                                    f"bound {result.bound}, {result.seconds:.2f} s"],
                             global_reason="a global re-solve: every free operation may move")
    return run


def _lcrp(state: ExecutionState, *, budget: float, seed: int, workers: int,
          is_valid: Callable[[Schedule], bool], effort: float = 1.0, tolerance: float = 0.0,
          clock: SearchClock | None = None, first_edit: FirstEdit | str = DEFAULT_FIRST_EDIT) -> RepairOutcome:
    return lcrp(state, budget=budget, seed=seed, workers=workers, is_valid=is_valid, effort=effort,
                tolerance=tolerance, clock=clock, first_edit=first_edit)


_REPAIRERS: dict[RepairMethod, Repairer] = {
    RepairMethod.RIGHT_SHIFT: _shifting(right_shift),
    RepairMethod.AOR: _shifting(aor),
    RepairMethod.FULL: _resolving(stable=False),
    RepairMethod.FULL_STABLE: _resolving(stable=True),
    RepairMethod.LCRP: _lcrp,
}


def get_repairer(method: RepairMethod | str) -> Repairer:
    """The strategy implementing ``method``."""
    return _REPAIRERS[RepairMethod.parse(method)]
