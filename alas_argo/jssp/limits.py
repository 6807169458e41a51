"""The ranges of the domain's numbers, enforced where documents become models.

A time of 10**30 or ``true`` for a time is not a disruption anyone means; refused when the model is built,
such values never reach the validator's int64 arrays (``OverflowError``) or a solver's model.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, Strict

__all__ = ["MAX_MACHINES", "MAX_TIME", "Count", "TimeValue"]

#: Largest absolute time value accepted; keeps the validator's packed int64 sort keys from overflowing.
MAX_TIME = 2**40
#: Most machines an instance may name (machine numbers are array indices).
MAX_MACHINES = 10_000

#: A time, duration or index read from a document: an integer (never a boolean or a float), within +-MAX_TIME.
TimeValue = Annotated[int, Strict(), Field(ge=-MAX_TIME, le=MAX_TIME)]
#: A job, step or machine number read from a document: an integer in [-MAX_TIME, MAX_TIME] (the rules name
#: out-of-range numbers with their place; the bound only keeps them machine-sized).
Count = TimeValue
