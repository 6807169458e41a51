"""The controller's contracts at their edges (bench/README, mutation testing of ``controller/contracts.py``):
every field of a disruption request at both ends of its documented range (docs/contracts.md), the closed sets
of methods and of first edits, strict types, unknown fields, the ``where`` and message of each refusal, the
fingerprint's recorded form and the response's JSON body. Direct calls to ``parse_request`` and the models:
the HTTP layer that turns an InputError into a 422 is tested in test_http_server.py."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from pydantic import ValidationError

from alas_argo.controller.contracts import DisruptionRequest, RepairResponse, parse_request
from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption, DurationChange, MachineBreakdown
from alas_argo.jssp.repair import DEFAULT_FIRST_EDIT, FirstEdit

EVENT: dict[str, Any] = {"kind": "machine_breakdown", "machine": 0, "start": 2, "duration": 3}
BODY: dict[str, Any] = {"time": 2, "events": [EVENT]}


def parse(**fields: Any) -> DisruptionRequest:
    """``BODY`` with ``fields`` replaced (a value of ``...`` drops the field), through the controller's parser."""
    doc = {**BODY, **fields}
    return parse_request(json.dumps({k: v for k, v in doc.items() if v is not ...}).encode())


def refusal(**fields: Any) -> tuple[str, str | dict[str, Any] | None]:
    """(message, where) of the InputError the parser raises for ``BODY`` with ``fields``."""
    with pytest.raises(InputError) as caught:
        parse(**fields)
    return str(caught.value.args[0]), caught.value.where


@pytest.mark.parametrize("raw", [b"[]", b"3", b"null", b'"time"'])
def test_a_body_that_is_not_an_object_is_refused_at_body(raw: bytes) -> None:
    """pydantic locates this problem nowhere (an empty path): the parser names the body itself."""
    with pytest.raises(InputError) as caught:
        parse_request(raw)
    assert caught.value.args[0] == "Input should be a valid dictionary or instance of DisruptionRequest"
    assert caught.value.where == "body"
    assert str(caught.value) == "body: Input should be a valid dictionary or instance of DisruptionRequest"


def test_invalid_json_is_refused_before_any_model() -> None:
    with pytest.raises(InputError) as caught:
        parse_request(b'{"time": 2,')
    assert caught.value.where == "body line 1 column 12"


def test_the_first_problem_names_its_field_and_says_what_is_wrong() -> None:
    assert refusal(time=...) == ("Field required", "time")
    assert refusal(events=...) == ("Field required", "events")
    assert refusal(colour="red") == ("Extra inputs are not permitted", "colour")
    # A nested problem is named by its dotted path (pydantic's, with the event's tag).
    assert refusal(events=[{**EVENT, "machine": True}]) == ("Input should be a valid integer",
                                                            "events.0.machine_breakdown.machine")
    assert refusal(events=[{"kind": "repair"}]) == (
        "Input tag 'repair' found using 'kind' does not match any of the expected tags: 'machine_breakdown', "
        "'duration_change'", "events.0")


def test_defaults_are_the_documented_ones() -> None:
    request = parse()
    assert (request.method, request.budget, request.effort, request.tolerance) == ("lcrp", 5.0, 1.0, 0.0)
    assert request.first_edit is DEFAULT_FIRST_EDIT  # the library's constant, not a second default


@pytest.mark.parametrize("edit", list(FirstEdit))
def test_each_first_edit_is_accepted(edit: FirstEdit) -> None:
    assert parse(first_edit=edit.value).first_edit is edit


@pytest.mark.parametrize("edit", ["Tabu", "re-dispatch", "", None, 1, ["tabu"]])
def test_any_other_first_edit_is_refused_naming_the_field_and_the_known_ones(edit: object) -> None:
    assert refusal(first_edit=edit) == ("Input should be 'redispatch' or 'tabu'", "first_edit")


@pytest.mark.parametrize(("field", "good", "bad"), [
    ("time", [0, 10**9], [-1, 10**9 + 1]),
    ("budget", [1e-9, 120, 120.0], [0, -1, 120.000001]),
    ("effort", [1e-9, 100], [0, -0.5, 100.000001]),
    ("tolerance", [0, 0.0, 0.1], [-1e-9, 0.100001]),
])
def test_every_number_is_accepted_at_both_ends_of_its_range_and_refused_past_them(
        field: str, good: list[float], bad: list[float]) -> None:
    """docs/contracts.md: time 0 to 10^9, budget above 0 and at most 120, effort above 0 and at most 100,
    tolerance 0 to 0.1."""
    for value in good:
        assert getattr(parse(**{field: value}), field) == value
    for value in bad:
        message, where = refusal(**{field: value})
        assert where == field and message.startswith("Input should be "), (value, message)


def test_events_are_one_to_a_thousand() -> None:
    assert len(parse(events=[EVENT] * 1000).events) == 1000
    assert refusal(events=[]) == ("List should have at least 1 item after validation, not 0", "events")
    assert refusal(events=[EVENT] * 1001) == ("List should have at most 1000 items after validation, not 1001",
                                              "events")


@pytest.mark.parametrize("method", ["lcrp", "aor", "right-shift", "full", "full-stable"])
def test_each_documented_method_is_accepted(method: str) -> None:
    assert parse(method=method).method == method


@pytest.mark.parametrize("method", ["LCRP", "right_shift", "global", "", None, 1])
def test_any_other_method_is_refused(method: object) -> None:
    message, where = refusal(method=method)
    assert where == "method"
    assert message == "Input should be 'lcrp', 'aor', 'right-shift', 'full' or 'full-stable'"


@pytest.mark.parametrize("value", [True, False, 2.0, "2", None, [2]])
def test_time_is_a_strict_integer(value: object) -> None:
    assert refusal(time=value)[1] == "time"


@pytest.mark.parametrize("field", ["budget", "effort", "tolerance"])
@pytest.mark.parametrize("value", [True, "0.05", None, [0.05]])
def test_a_number_field_takes_a_json_number_only(field: str, value: object) -> None:
    """``true`` is not a budget of 1 s, nor ``"0.05"`` a tolerance (they were coerced before the fields were
    made strict); a JSON integer is still a number."""
    assert refusal(**{field: value}) == ("Input should be a valid number", field)
    integer = {"budget": 1, "effort": 2, "tolerance": 0}[field]
    assert getattr(parse(**{field: integer}), field) == float(integer)


def test_the_request_is_frozen() -> None:
    request = parse()
    with pytest.raises(ValidationError):
        request.budget = 1.0  # type: ignore[misc]


def test_the_disruption_is_the_time_and_the_events() -> None:
    change = {"kind": "duration_change", "job": 1, "step": 0, "duration": 9}
    disruption = parse(time=5, events=[EVENT, change]).disruption()
    assert isinstance(disruption, Disruption)
    assert disruption == Disruption(time=5, events=[MachineBreakdown(machine=0, start=2, duration=3),
                                                    DurationChange(job=1, step=0, duration=9)])


def test_the_fingerprint_is_the_hash_of_the_recorded_form() -> None:
    """Idempotency records in stores hold fingerprints: their form must not drift. The sorted JSON of the
    request, numbers as JSON numbers (budget a float), effort and tolerance left out at their defaults."""
    legacy = ('{"budget": 5.0, "events": [{"duration": 3, "kind": "machine_breakdown", "machine": 0, "start": 2}], '
              '"method": "lcrp", "time": 2}')
    assert parse().fingerprint() == hashlib.sha256(legacy.encode()).hexdigest()
    # A default written out is the default: effort 1 and tolerance 0 keep the fingerprint.
    assert parse(effort=1, tolerance=0).fingerprint() == parse().fingerprint()
    both = ('{"budget": 5.0, "effort": 2.0, "events": [{"duration": 3, "kind": "machine_breakdown", "machine": 0, '
            '"start": 2}], "method": "lcrp", "time": 2, "tolerance": 0.01}')
    assert parse(effort=2, tolerance=0.01).fingerprint() == hashlib.sha256(both.encode()).hexdigest()
    # The first edit at the library's default is left out too (a retry of a request that named none keeps its
    # fingerprint when the default changes); the other one is part of it.
    assert parse(first_edit=DEFAULT_FIRST_EDIT.value).fingerprint() == parse().fingerprint()
    [other] = [e for e in FirstEdit if e is not DEFAULT_FIRST_EDIT]
    named = json.dumps({**json.loads(legacy), "first_edit": other.value}, sort_keys=True)
    assert parse(first_edit=other.value).fingerprint() == hashlib.sha256(named.encode()).hexdigest()


def test_the_response_body_is_every_documented_field() -> None:
    response = RepairResponse(run_id="r", version=3, parent_version=2, makespan=40, baseline_makespan=38,
                              moved_operations=4, total_start_shift=9, edit_radius=6, method="lcrp",
                              fallback=False, seconds=0.25)
    body = response.to_json()
    assert body == {"run_id": "r", "version": 3, "parent_version": 2, "makespan": 40, "baseline_makespan": 38,
                    "moved_operations": 4, "total_start_shift": 9, "edit_radius": 6, "method": "lcrp",
                    "fallback": False, "seconds": 0.25, "idempotent_replay": False}
    assert json.loads(json.dumps(body)) == body
