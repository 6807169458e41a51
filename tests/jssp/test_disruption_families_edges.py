"""Disruption families pinned, found loose by mutation testing: the range checks of test_disruption_families.py
held when the generator was called without the seed, the drawn downtime, the random machines, the
per-operation growth or the family's own share. A benchmark row names (family, seed, plan), and `alas disrupt
--family F --seed S` must give the event it was measured on, so these are the events of seed 4 on ft06's MWKR
plan (makespan 67), as the generator draws them today; the draw behind each is pinned too."""

from __future__ import annotations

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption_families import FAMILIES, draw_family, generate_family, get_family
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.schedule import Schedule


@pytest.fixture
def plan(ft06: Instance) -> Schedule:
    schedule = dispatch(ft06, "mwkr")
    assert schedule.makespan == 67
    return schedule


@pytest.mark.parametrize(("name", "time", "breakdowns", "changes"), [
    ("reveal-sweep", 26, [(5, 26, 4)], {}),
    ("long-breakdown", 27, [(5, 27, 6)], {}),
    # Random machines: the four busiest, which a plain breakdown of 4 machines takes, are 0, 3, 4 and 5.
    ("multi-breakdown", 46, [(0, 46, 4), (1, 46, 4), (2, 46, 4), (4, 46, 4)], {}),
    # Each operation grows by its own fraction of 0.1-1.0: (1, 4) from 10 to 20, (3, 2) from 5 to 10.
    ("shock-sweep", 18, [], {(1, 4): 20, (2, 3): 15, (3, 2): 10, (3, 4): 15, (3, 5): 16, (4, 0): 15, (4, 4): 4}),
    # The family's share as drawn, not halved as the plain mixed kind halves it.
    ("mixture", 40, [(2, 40, 3)], {(0, 4): 4, (4, 5): 2}),
])
def test_seed_4_on_ft06_draws_these_events(ft06: Instance, plan: Schedule, name: str, time: int,
                                           breakdowns: list[tuple[int, int, int]],
                                           changes: dict[tuple[int, int], int]) -> None:
    d = generate_family(ft06, plan, name, seed=4)
    assert d.time == time
    assert [(b.machine, b.start, b.duration) for b in d.breakdowns] == breakdowns
    assert d.duration_changes == changes


def test_the_default_seed_is_0_and_seeds_differ(ft06: Instance, plan: Schedule) -> None:
    for name in FAMILIES:
        assert generate_family(ft06, plan, name) == generate_family(ft06, plan, name, seed=0)
    assert generate_family(ft06, plan, "reveal-sweep").to_json() == {
        "time": 26, "events": [{"kind": "machine_breakdown", "machine": 5, "start": 26, "duration": 9}]}
    # Same reveal time as seed 4, another downtime: the seed reaches the generator, not only the draw.
    assert generate_family(ft06, plan, "reveal-sweep", seed=4).breakdowns[0].duration == 4


def test_a_draw_names_its_family_and_seed_and_the_family_s_ranges(ft06: Instance) -> None:
    draw = draw_family("shock-sweep", 4, ft06.num_machines)
    assert draw.as_dict() == {"family": "shock-sweep", "seed": 4, "at": pytest.approx(0.2736536389051185),
                              "length": pytest.approx(0.10197990619139138), "machines": 1,
                              "share": pytest.approx(0.2968823500006107), "increase": 0.1, "increase_max": 1.0}
    assert draw_family("reveal-sweep", 4, 6).as_dict() == {
        "family": "reveal-sweep", "seed": 4, "at": pytest.approx(0.38979552620932745),
        "length": pytest.approx(0.05894959087621863), "machines": 1, "share": 0.2, "increase": 0.3,
        "increase_max": 0.3}


def test_machines_are_capped_by_the_instance(tiny: Instance) -> None:
    # multi-breakdown draws 2-4 machines; tiny has 3.
    counts = {draw_family("multi-breakdown", seed, tiny.num_machines).machines for seed in range(30)}
    assert counts == {2, 3}
    plan = dispatch(tiny, "mwkr")
    assert all(len(generate_family(tiny, plan, "multi-breakdown", seed=s).breakdowns) <= 3 for s in range(10))


def test_an_unknown_family_lists_the_known_ones() -> None:
    with pytest.raises(InputError) as info:
        get_family("meteor")
    assert info.value.message == ("unknown disruption family 'meteor'; known: reveal-sweep, long-breakdown, "
                                  "multi-breakdown, shock-sweep, mixture")
