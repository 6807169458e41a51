"""Fault injection's edges: which kinds a context allows (both ends of each condition), what the default mix
draws from, an explicit kind honoured or refused, zero faults, the default seed, and the exact refusals.

Found by mutation testing (scripts/mutation.py on alas_argo/jssp/faults.py): the property tests in
test_faults.py draw their kinds from ``applicable_kinds`` itself and skip any case that raises, so they could not
see a kind wrongly allowed or withheld, an explicit kind silently replaced, or a refusal's wording.
"""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption, MachineBreakdown
from alas_argo.jssp.faults import FaultKind, applicable_kinds, inject_faults
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.validate import validate
from tests.jssp.strategies import repair_decode
from tests.jssp.test_faults import assert_detected, semi_active

STATIC = [FaultKind.PRECEDENCE, FaultKind.MACHINE_OVERLAP, FaultKind.WRONG_DURATION, FaultKind.MISSING_OPERATION,
          FaultKind.DUPLICATE_OPERATION, FaultKind.WRONG_MACHINE, FaultKind.NEGATIVE_START]
#: Two jobs on two machines: small enough that the default mix runs out of room for some kinds.
TWO = Instance(name="two", jobs=[[(0, 2), (1, 3)], [(1, 2), (0, 1)]])


def down(time: int, duration: int) -> Disruption:
    return Disruption(time=time, events=[MachineBreakdown(machine=0, start=time, duration=duration)])


def test_without_a_disruption_only_the_static_kinds_are_possible_even_with_a_baseline(ft06: Instance) -> None:
    assert applicable_kinds() == STATIC
    assert applicable_kinds(None, semi_active(ft06)) == STATIC


@pytest.mark.parametrize(("time", "duration", "with_baseline", "extra"), [
    # started_in_past needs a baseline and a reveal time of at least 1 (something must have started before it).
    (1, 0, True, [FaultKind.STARTED_IN_PAST, FaultKind.FROZEN_MOVED]),
    (0, 0, True, [FaultKind.FROZEN_MOVED]),
    (5, 0, False, []),
    # downtime_overlap needs a breakdown of positive length: one of length 0 is no downtime.
    (0, 1, False, [FaultKind.DOWNTIME_OVERLAP]),
    (3, 1, True, [FaultKind.STARTED_IN_PAST, FaultKind.DOWNTIME_OVERLAP, FaultKind.FROZEN_MOVED]),
])
def test_each_disruption_kind_needs_exactly_its_context(ft06: Instance, time: int, duration: int,
                                                        with_baseline: bool, extra: list[FaultKind]) -> None:
    baseline = semi_active(ft06) if with_baseline else None
    assert applicable_kinds(down(time, duration), baseline) == [*STATIC, *extra]


def test_the_default_mix_draws_the_disruption_kinds_from_the_context_it_is_given(ft06: Instance) -> None:
    """With no kinds given, a disrupted plan gets the disruption-aware faults too: each kind the context allows
    once, every one of them detected."""
    baseline = semi_active(ft06)
    t = baseline.makespan // 3
    busy = next(o.machine for o in baseline.operations if o.start < t < o.end)
    d = Disruption(time=t, events=[MachineBreakdown(machine=busy, start=t, duration=5)])
    repaired = repair_decode(ft06, baseline, d)
    possible = applicable_kinds(d, baseline)
    assert set(possible) == set(FaultKind)
    out = inject_faults(ft06, repaired, count=len(possible), seed=2, disruption=d, baseline=baseline)
    assert sorted(f.kind for f in out.faults) == sorted(possible)
    assert_detected(validate(ft06, out.schedule, disruption=d, baseline=baseline), out.faults)


def test_zero_faults_is_allowed_and_leaves_the_plan_as_it_was(ft06: Instance) -> None:
    schedule = semi_active(ft06)
    out = inject_faults(ft06, schedule, count=0)
    assert out.faults == []
    assert out.schedule.to_json() == schedule.to_json()


def test_the_default_seed_is_0(ft06: Instance) -> None:
    """The pipeline's inject stage passes its run's seed, but a caller that passes none gets seed 0, reproducibly."""
    schedule = semi_active(ft06)
    default = inject_faults(ft06, schedule, count=4).to_json()
    assert default == inject_faults(ft06, schedule, count=4, seed=0).to_json()
    assert default != inject_faults(ft06, schedule, count=4, seed=1).to_json()


def test_an_explicit_kind_that_cannot_be_placed_is_refused_not_replaced(ft06: Instance) -> None:
    """frozen_moved needs a baseline: asked for first, it is refused by name even though the next kind given would
    fit (the default mix would move on; an explicit list must not)."""
    with pytest.raises(InputError) as e:
        inject_faults(ft06, semi_active(ft06), kinds=[FaultKind.FROZEN_MOVED, FaultKind.MISSING_OPERATION], count=2)
    assert e.value.message == ("cannot inject fault 0 of kind frozen_moved: no suitable operation, or it needs a "
                               "disruption/baseline that was not given")
    assert e.value.where == "ft06"


def test_the_default_mix_moves_on_to_the_next_kind_that_still_fits() -> None:
    """On two jobs and two machines, after a duplicate and a wrong duration (seed 0's first two kinds) no machine
    overlap can be placed without touching what they depend on; the mix takes the next kind in its order that fits."""
    schedule = semi_active(TWO)
    out = inject_faults(TWO, schedule, count=3, seed=0)
    assert [f.kind for f in out.faults] == [FaultKind.DUPLICATE_OPERATION, FaultKind.WRONG_DURATION,
                                            FaultKind.PRECEDENCE]
    assert_detected(validate(TWO, out.schedule), out.faults)


def test_the_default_mix_that_runs_out_names_every_kind_it_tried() -> None:
    """After three faults on two jobs and two machines no kind fits: the refusal names all seven kinds, in the
    order tried (it named only the last, as if that kind alone had been asked for)."""
    with pytest.raises(InputError) as e:
        inject_faults(TWO, semi_active(TWO), count=4, seed=0)
    assert e.value.message == ("cannot inject fault 3 of any kind (precedence, wrong_machine, missing_operation, "
                               "negative_start, duplicate_operation, wrong_duration, machine_overlap tried): no "
                               "suitable operation, or it needs a disruption/baseline that was not given")
    assert e.value.where == "two"


def test_the_refusals_say_exactly_what_was_wrong(ft06: Instance) -> None:
    schedule = semi_active(ft06)
    with pytest.raises(InputError) as e:
        inject_faults(ft06, schedule, count=-1)
    assert e.value.message == "fault count must be >= 0, got -1"
    with pytest.raises(InputError) as e:
        inject_faults(ft06, schedule, kinds=[])
    assert e.value.message == "no fault kinds given"
