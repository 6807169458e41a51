"""Lists that must not repeat an entry: a bench's instances, scenarios, methods and seeds, a PlanRun's seeds.

A repeated entry is run twice and counted twice in every mean of the tables it feeds, so each place that takes
such a list refuses a repeat, naming it; this is the one test they share.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from enum import Enum

__all__ = ["repeated"]


def repeated(values: Iterable[object]) -> list[str]:
    """The entries of ``values`` given more than once, as sorted text (an enum member by its value); empty when
    none repeats."""
    counts = Counter(v.value if isinstance(v, Enum) else v for v in values)
    return sorted(str(v) for v, n in counts.items() if n > 1)
