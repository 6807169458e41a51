"""Disruption families: seeded, reproducible, within their ranges, valid inputs for every repair."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.disruption_families import FAMILIES, draw_family, generate_family, get_family, is_family
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule


@pytest.fixture
def plan(ft06: Instance) -> Schedule:
    return dispatch(ft06, "mwkr")


@pytest.mark.parametrize("name", list(FAMILIES))
def test_family_is_seeded_and_within_its_ranges(ft06: Instance, plan: Schedule, name: str) -> None:
    family = get_family(name)
    times = set()
    for seed in range(12):
        d = generate_family(ft06, plan, name, seed=seed)
        assert d == generate_family(ft06, plan, name, seed=seed)
        check_disruption(ft06, plan, d)
        draw = draw_family(name, seed, ft06.num_machines)
        assert family.at[0] <= draw.at <= family.at[1]
        assert d.time == min(round(draw.at * plan.makespan), plan.makespan - 1)
        times.add(d.time)
        downs = d.breakdowns
        if family.kind.value in ("breakdown", "mixed"):
            assert family.machines[0] <= len(downs) == len({b.machine for b in downs}) <= family.machines[1]
            for b in downs:
                assert b.start == d.time
                assert round(family.length[0] * plan.makespan) <= b.duration <= round(
                    family.length[1] * plan.makespan) + 1
        else:
            assert not downs
        for (j, s), new in d.duration_changes.items():
            base = ft06.duration(j, s)
            assert new > base and new <= max(base + 1, -(-base * (1 + family.increase[1]) // 1))
    assert len(times) > 3  # the reveal time really varies


def test_families_differ_from_the_plain_kinds(ft06: Instance, plan: Schedule) -> None:
    assert is_family("mixture") and not is_family("mixed")
    assert generate_family(ft06, plan, "reveal-sweep", seed=0) != generate_disruption(ft06, plan, "breakdown", seed=0)
    with pytest.raises(InputError, match="unknown disruption family"):
        get_family("meteor")


def test_several_machines_at_once(ft06: Instance, plan: Schedule) -> None:
    d = generate_disruption(ft06, plan, "breakdown", machines=3, at=0.3, length=0.1)
    assert len({b.machine for b in d.breakdowns}) == 3
    busiest = generate_disruption(ft06, plan, "breakdown", at=0.3, length=0.1).breakdowns[0].machine
    assert busiest in {b.machine for b in d.breakdowns}
    assert generate_disruption(ft06, plan, "breakdown", machines=2, machine=4, at=0.3).breakdowns[0].machine in (
        *range(4), 4)
    assert 4 in {b.machine for b in generate_disruption(ft06, plan, "breakdown", machines=2, machine=4).breakdowns}
    with pytest.raises(InputError, match="machines"):
        generate_disruption(ft06, plan, "breakdown", machines=7)


def test_per_operation_increase_range(ft06: Instance, plan: Schedule) -> None:
    d = generate_disruption(ft06, plan, "shock", share=1.0, at=0.0, increase=0.1, increase_max=1.0, seed=2)
    ratios = {new / ft06.duration(j, s) for (j, s), new in d.duration_changes.items()}
    assert len(ratios) > 3 and max(ratios) <= 2.0 + 1e-9
    with pytest.raises(InputError, match="increase_max"):
        generate_disruption(ft06, plan, "shock", increase=0.5, increase_max=0.2)


def test_defaults_draw_as_before(ft06: Instance, plan: Schedule) -> None:
    """The new options leave the old seeds' disruptions unchanged, so earlier benchmark rows stay reproducible:
    these are what the generator drew before ``machines`` and ``increase_max`` existed."""
    assert generate_disruption(ft06, plan, "breakdown", seed=5).to_json() == {
        "time": 29, "events": [{"kind": "machine_breakdown", "machine": 5, "start": 29, "duration": 9}]}
    mixed = generate_disruption(ft06, plan, "mixed", seed=5)
    assert mixed.time == 21 and [b.machine for b in mixed.breakdowns] == [5]
    assert mixed.duration_changes == {(1, 5): 6, (3, 3): 4}
    assert generate_disruption(ft06, plan, "shock", seed=5).duration_changes == {
        (0, 5): 8, (1, 5): 6, (2, 3): 12, (2, 4): 2, (4, 3): 6}
