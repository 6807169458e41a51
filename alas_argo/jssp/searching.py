"""How long a search may run, measured so that a run can be reproduced, and the one place CP-SAT solves run.

Two kinds of limits (every budget in the API stays in *nominal seconds*):

- **deterministic** (the default): CP-SAT's deterministic time (``max_deterministic_time``, a count of the
  work the search did) with one search worker and a fixed seed. The same request gives the same schedule on
  any machine under any load, which is what replay and resume need. A nominal second is
  :data:`DTIME_PER_SECOND` units of deterministic time: about one second of one core of the development
  machine. CP-SAT's multi-worker search is not reproducible under a deterministic limit (its workers race
  to share solutions), so the count of workers is fixed at one.
- **wall clock**: ``max_time_in_seconds`` on ``workers`` workers. On an idle machine it reaches a good plan
  faster; it is not reproducible (the search stops where the clock says, and the workers race).

Code that spends one budget over several solves (LNS, LCRP, static planning) reads the time from a
:class:`SearchClock`: wall seconds, or the deterministic time its solves have spent so far (Python work in
between costs nothing), so its decisions ("is there time for another step?") are reproducible too.

Every solve goes through :func:`run_solver`, which registers it for stop requests
(:mod:`alas_argo.interrupts`): SIGINT / SIGTERM end the search, and :class:`~alas_argo.interrupts.Interrupted`
is raised here, after ``solve`` has returned, never inside a callback.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from alas_argo import interrupts
from alas_argo.deferred import deferred
from alas_argo.seeds import MAX_SEED

if TYPE_CHECKING:
    from ortools.sat.python import cp_model
    from ortools.sat.python import cp_model_helper as cmh
else:  # the one deferred CP-SAT module every solver module imports from here (alas_argo.deferred)
    cp_model = deferred("ortools.sat.python.cp_model")

__all__ = ["DTIME_PER_SECOND", "MIN_CHARGE", "UNCHARGED_OPERATIONS", "SearchClock", "add_hints", "cp_model",
           "new_model", "new_solver", "run_solver", "search_workers"]

#: Deterministic time units per nominal second. Measured on the 2-core development machine (load 7-10), CPU
#: seconds per unit around every single-worker solve of ``plan`` (2 s) and of lcrp and full repairs on ft10,
#: ta01, ta21 and ta41: 4.2 (whole-instance solves of small instances) to 11.3 (LCRP's subproblems), median
#: about 7.5; so a nominal second is about one CPU second (bench/README.md, "deterministic limits").
DTIME_PER_SECOND = 0.15
#: The least a solve is charged on a deterministic clock, in nominal seconds: loops that stop when the
#: budget is spent always make progress, even over solves that presolve settles at once.
MIN_CHARGE = 0.001
#: Up to this many operations, the Python work around a solve (building the model, checking the hint, reading the
#: answer back, evaluating the plan) is left off a deterministic clock, as LCRP was tuned on every instance of
#: the suites (100x20 at most); beyond it a stage that scans every operation per solve charges that work
#: (:meth:`SearchClock.charge_operations`), or its time grows with the square of the instance.
UNCHARGED_OPERATIONS = 2000


def search_workers(workers: int, *, deterministic: bool) -> int:
    """CP-SAT search workers for a request asking for ``workers``: one under a deterministic limit."""
    return 1 if deterministic else max(1, workers)


class SearchClock:
    """The time a budget is spent against: wall seconds, or nominal seconds of deterministic time.

    Not thread-safe: one clock per sequence of solves. Solves run side by side each get a :meth:`fork`, and
    are :meth:`join`-ed back when they are all done.

    Args:
        deterministic: Count deterministic time (reproducible) instead of wall time.
        streams: How many independent streams a search that can run several side by side runs (LCRP's
            re-optimizing search); recorded with the results, because the plan depends on it.
    """

    def __init__(self, *, deterministic: bool = True, streams: int = 1) -> None:
        self.deterministic = deterministic
        self.streams = max(1, streams)
        self._started = time.monotonic()
        self._spent = 0.0
        #: Deterministic time units the solves charged to this clock (both modes; recorded with results).
        self.dtime = 0.0
        #: Solves charged to this clock.
        self.solves = 0

    def now(self) -> float:
        """Nominal seconds since the clock started."""
        if self.deterministic:
            return self._spent
        return time.monotonic() - self._started

    def left(self, budget: float) -> float:
        """What is left of ``budget`` seconds counted from the clock's start."""
        return budget - self.now()

    def charge(self, solver: cp_model.CpSolver) -> None:
        """Count a finished solve (at least :data:`MIN_CHARGE` on a deterministic clock)."""
        self.solves += 1
        self.dtime += solver.deterministic_time
        self._spent += max(MIN_CHARGE, solver.deterministic_time / DTIME_PER_SECOND)

    def fork(self) -> SearchClock:
        """A clock for one of several searches run side by side (one stream each); :meth:`join` them back."""
        return SearchClock(deterministic=self.deterministic)

    def join(self, forks: list[SearchClock]) -> None:
        """Count the searches run side by side on ``forks``: their solves and work go on the record, and the
        time they took is the longest of them (they ran at the same time, each on its own core)."""
        self.solves += sum(f.solves for f in forks)
        self.dtime += sum(f.dtime for f in forks)
        self._spent += max((f._spent for f in forks), default=0.0)

    def charge_at_least(self, since: float, seconds: float) -> None:
        """On a deterministic clock, make what was charged since ``since`` (a :meth:`now`) at least ``seconds``:
        for solves whose fixed cost outside CP-SAT's deterministic time (building the model) is most of them."""
        if self.deterministic:
            self._spent = max(self._spent, since + seconds)

    def charge_operations(self, since: float, operations: int, per_operation: float) -> None:
        """On a deterministic clock, make what was charged since ``since`` at least ``per_operation`` nominal
        seconds per operation beyond :data:`UNCHARGED_OPERATIONS`: a step whose Python work scans that many."""
        self.charge_at_least(since, per_operation * max(0, operations - UNCHARGED_OPERATIONS))

    def charge_nothing(self) -> None:
        """Count a search step that ended before any solve (so a loop over such steps still ends)."""
        self._spent += MIN_CHARGE

    def record(self, workers: int) -> dict[str, Any]:
        """What makes the searches on this clock reproducible, for the execution log."""
        record: dict[str, Any] = {
            "deterministic": self.deterministic, "dtime_per_second": DTIME_PER_SECOND,
            "search_workers": search_workers(workers, deterministic=self.deterministic),
            "search_streams": self.streams, "deterministic_time": round(self.dtime, 6), "solves": self.solves}
        if self.deterministic:
            # The clock's own time: the work of streams run side by side counted once, as it was spent.
            record["nominal_seconds"] = round(self._spent, 6)
        return record


@functools.cache
def _model_class() -> type[cp_model.CpModel]:
    # Built on first use, not at import: OR-Tools is imported when a model is first needed (alas_argo.deferred).
    class _Model(cp_model.CpModel):
        """A CpModel without the pre-PEP 8 aliases CP-SAT attaches to every new model (about 70 bound methods,
        0.15 ms a model: LCRP builds one per search step, dozens per repair); the project uses the snake_case
        API only."""

        def _add_pre_pep8_methods(self) -> None:
            pass

    return _Model


def new_model() -> cp_model.CpModel:
    """An empty CP-SAT model (the snake_case API only)."""
    return _model_class()()


def add_hints(model: cp_model.CpModel, hints: Iterable[tuple[cmh.Literal, int]]) -> None:
    """Hint each variable with its value: the same solution hint as ``model.add_hint`` one at a time (in the
    same order), appended in two calls instead of two per variable (a third of a small model's build time)."""
    pairs = list(hints)
    if any(v.index < 0 for v, _ in pairs):  # negated literals: CP-SAT's own conversion
        for v, x in pairs:
            if isinstance(v, cp_model.IntVar):
                model.add_hint(v, x)
            else:
                model.add_hint(v, bool(x))
        return
    proto = model.proto.solution_hint
    proto.vars.extend([v.index for v, _ in pairs])
    proto.values.extend([int(x) for _, x in pairs])


def new_solver(*, seconds: float, workers: int, seed: int, deterministic: bool) -> cp_model.CpSolver:
    """A CP-SAT solver limited to ``seconds`` nominal seconds, with CP-SAT's own SIGINT handler off.

    Under a deterministic limit a wall-clock limit stays as a safety net far beyond the budget (a search
    that hits it would not be reproducible, so it must never be the one that ends it).
    """
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.catch_sigint_signal = False  # CP-SAT's handler aborts the process when a solve runs off the main thread
    # Seeds derived from a user's (a stream's offset added) can pass CP-SAT's int32: folded back, as a user's
    # own seed never needs (alas_argo.seeds).
    p.random_seed = seed if -MAX_SEED - 1 <= seed <= MAX_SEED else seed % (MAX_SEED + 1)
    p.num_workers = search_workers(workers, deterministic=deterministic)
    seconds = max(seconds, 0.01)
    if deterministic:
        p.max_deterministic_time = seconds * DTIME_PER_SECOND
        p.max_time_in_seconds = max(600.0, 200 * seconds)
    else:
        p.max_time_in_seconds = seconds
    return solver


def run_solver(solver: cp_model.CpSolver, model: cp_model.CpModel, clock: SearchClock | None = None,
               callback: cp_model.CpSolverSolutionCallback | None = None, *, where: str = "a solve") -> Any:
    """Solve ``model``, stoppable by SIGINT / SIGTERM, and charge ``clock``; returns CP-SAT's status.

    On the main thread, with the signal handlers of :func:`alas_argo.interrupts.handling_signals` installed,
    the search runs in a helper thread while the main thread waits: Python runs signal handlers only on the
    main thread, and only between bytecodes, never while it is inside ``solve``.

    Raises:
        Interrupted: A stop was requested before or during the solve.
    """
    box: dict[str, Any] = {}

    def body() -> None:
        try:
            box["status"] = solver.solve(model, callback)
        except BaseException as e:  # handed to the caller's thread below
            box["error"] = e

    with interrupts.stoppable(solver, where):
        if threading.current_thread() is threading.main_thread() and interrupts.handlers_installed():
            helper = threading.Thread(target=body, name="alas-solve", daemon=True)
            helper.start()
            helper.join()
        else:
            body()
    if "error" in box:
        raise box["error"]
    if clock is not None:
        clock.charge(solver)
    return box["status"]
