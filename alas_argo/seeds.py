"""Random seeds: the range every seed a user gives must fit.

CP-SAT's ``random_seed`` is a 32-bit integer: a larger seed (``--seed 99999999999999999999``) used to reach
it and fail with a binding's TypeError. Seeds are refused outside ``[0, MAX_SEED]`` where they are read (flags,
run configuration, settings, PlanRun resources); the solver folds the seeds it derives from them (a seed plus a
stream's offset) back into CP-SAT's range (:func:`alas_argo.jssp.searching.new_solver`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

__all__ = ["MAX_SEED", "Seed"]

#: Largest seed accepted: CP-SAT's random_seed is an int32.
MAX_SEED = 2**31 - 1

#: A seed read from a flag or a document.
Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
