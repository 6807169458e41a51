"""LCRP's final polish (docs/lcrp.md, step 6): the plan the earlier stages leave is settled in its own machine
order and greedily restored, operations outside the neighbourhood held, and kept only when valid.

The stabilization normally settles the plan first, so the polish only changes something when the stabilization
did not: a time box spent before it (a tight budget), or a count solve that found nothing. Both are reached
here; the plan handed to the polish is recorded by wrapping LCRP's own ``settled`` (the real one still runs).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption, generate_disruption
from alas_argo.jssp.execution import ExecutionState, Key
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import lcrp as lcrp_module
from alas_argo.jssp.repair.lcrp import lcrp
from alas_argo.jssp.repair.metrics import moved_operations
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate

#: One call of LCRP's ``settled``: the plan given, the operations held, the plan returned.
Call = tuple[Schedule, frozenset[Key], Schedule]


@pytest.fixture(scope="module")
def la01() -> Instance:
    return get_instance("la01")


def _case(inst: Instance) -> tuple[Schedule, Disruption, ExecutionState, Callable[[Schedule], bool]]:
    # A weak plan under a mixed disruption (seed 0): the re-optimizing search and the windows both shorten it.
    plan = dispatch(inst, "mwkr")
    d = generate_disruption(inst, plan, "mixed", seed=0)
    return plan, d, ExecutionState.at(inst, plan, d), lambda s: validate(inst, s, disruption=d, baseline=plan).valid


def _record_settling(monkeypatch: pytest.MonkeyPatch) -> list[Call]:
    calls: list[Call] = []
    real = lcrp_module.settled

    def recording(state: ExecutionState, plan: Schedule, target: int, held: frozenset[Key],
                  is_valid: Callable[[Schedule], bool]) -> Schedule:
        out = real(state, plan, target, held, is_valid)
        calls.append((plan, frozenset(held), out))
        return out

    monkeypatch.setattr(lcrp_module, "settled", recording)
    return calls


def _polish_note(notes: list[str]) -> int:
    """The count the polish's note gives ("settle and restore: N operations back ..."); fails without one."""
    found = [n for n in notes if n.startswith("settle and restore: ")]
    assert len(found) == 1, notes
    return int(found[0].removeprefix("settle and restore: ").split()[0])


def test_a_plan_the_spent_box_left_unsettled_is_polished(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 0.03 s box: the re-optimizing search (on top of the box) shortens the plan and nothing is left for the
    stabilization, so the search's plan, with operations moved that need not be, reaches the polish as it is."""
    plan, _d, st, is_valid = _case(la01)
    calls = _record_settling(monkeypatch)
    out = lcrp(st, budget=0.03, is_valid=is_valid)
    assert not any(n.startswith("fewest moves") for n in out.notes)  # no stabilization ran
    given, held, polished = calls[-1]  # the polish is LCRP's last call of settled
    assert given is not polished and out.schedule is polished
    back = _polish_note(out.notes)
    assert back == moved_operations(plan, given) - moved_operations(plan, out.schedule) > 0
    assert out.schedule.makespan <= given.makespan
    assert is_valid(out.schedule) and not out.fallback
    # The search went global: every free operation may move, so the polish holds nothing but the frozen ones.
    assert out.neighbourhood == st.free and not held


def test_the_polish_holds_what_is_outside_the_neighbourhood(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first edit itself, when the re-optimizing search and the stabilization both find nothing: the polish
    moves operations back to their planned start inside the neighbourhood (the first edit's cascade, 22 of the
    25 free operations here) only, at no longer makespan."""
    plan, _d, st, is_valid = _case(la01)
    monkeypatch.setattr(lcrp_module, "lower_bound", lambda _state: 0)  # the makespan stays open
    monkeypatch.setattr(lcrp_module, "_search", lambda *_a, **_k: None)  # the first edit stays
    monkeypatch.setattr(lcrp_module, "stabilized", lambda _state, current, *_a, **_k: current)  # found nothing
    calls = _record_settling(monkeypatch)
    out = lcrp(st, budget=1.0, is_valid=is_valid, first_edit="redispatch")
    assert any("nearly every free operation" in n for n in out.notes) and not out.fallback
    assert len(calls) == 1  # no cascade solve, so no cascade plan to settle: this is the polish
    given, held, polished = calls[0]
    assert out.schedule is polished and given is not polished
    assert held == st.free - out.neighbourhood and held  # a part of the free operations is held
    back = _polish_note(out.notes)
    assert back == moved_operations(plan, given) - moved_operations(plan, out.schedule) > 0
    before, after = given.starts(), out.schedule.starts()
    assert all(after[k] == before[k] for k in held)
    planned = plan.starts()
    # Only moves back to the plan in force: any operation the polish touched is now where it was planned.
    assert all(after[k] == planned[k] for k in after if after[k] != before[k])
    assert out.schedule.makespan <= given.makespan
    assert is_valid(out.schedule)


def test_a_polished_plan_the_validator_rejects_is_not_taken(la01: Instance, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same spent box as the first test, with a validator that accepts every plan but a settled one: the
    polish keeps the search's plan and says nothing."""
    _plan, _d, st, is_valid = _case(la01)
    calls = _record_settling(monkeypatch)
    reference = lcrp(st, budget=0.03, is_valid=is_valid)
    unsettled, polished = calls[-1][0], calls[-1][2]
    assert polished is not unsettled
    refused = polished.starts()
    out = lcrp(st, budget=0.03, is_valid=lambda s: s.starts() != refused and is_valid(s))
    assert out.schedule.starts() == unsettled.starts() != refused
    assert not any(n.startswith("settle and restore") for n in out.notes)
    assert is_valid(out.schedule) and out.schedule.makespan == reference.schedule.makespan
