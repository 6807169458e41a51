"""`alas validate` and `alas bench validator` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo.benchmarks.validator import round_robin_schedule
from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.faults import FaultKind, inject_faults

Capture = pytest.CaptureFixture[str]


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return str(path)


@pytest.fixture
def ft06_doc() -> dict[str, Any]:
    return round_robin_schedule(get_instance("ft06")).to_json()


def test_valid_schedule_exit_0(tmp_path: Path, capsys: Capture, ft06_doc: dict[str, Any]) -> None:
    s = write(tmp_path / "s.json", ft06_doc)
    assert main(["validate", "--instance", "ft06", "--schedule", s]) == 0
    assert f"valid: 36 operations of ft06, makespan {ft06_doc['makespan']}" in capsys.readouterr().out


def test_invalid_schedule_exit_1_with_json_report(tmp_path: Path, capsys: Capture) -> None:
    inst = get_instance("ft06")
    out = inject_faults(inst, round_robin_schedule(inst), kinds=[FaultKind.MISSING_OPERATION,
                                                                 FaultKind.WRONG_DURATION], count=2)
    s = write(tmp_path / "s.json", out.schedule.to_json())
    assert main(["validate", "--instance", "ft06", "--schedule", s, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    got = {(v["code"], v["scope"]["job"], v["scope"]["step"]) for v in report["violations"]}
    assert {(f.kind.value, f.scope["job"], f.scope["step"]) for f in out.faults} <= got


def test_invalid_schedule_table(tmp_path: Path, capsys: Capture, ft06_doc: dict[str, Any]) -> None:
    ft06_doc["operations"][0]["end"] += 1
    s = write(tmp_path / "s.json", ft06_doc)
    assert main(["validate", "--instance", "ft06", "--schedule", s]) == 1
    text = capsys.readouterr().out
    assert "wrong_duration" in text and "invalid: wrong_duration 1" in text


def test_instance_mismatch_is_a_warning(tmp_path: Path, capsys: Capture, ft06_doc: dict[str, Any]) -> None:
    ft06_doc["instance"] = "ta01"
    s = write(tmp_path / "s.json", ft06_doc)
    assert main(["validate", "--instance", "ft06", "--schedule", s]) == 0
    assert "warning: instance_mismatch" in capsys.readouterr().out


def test_disruption_and_baseline(tmp_path: Path, capsys: Capture, ft06_doc: dict[str, Any]) -> None:
    base = write(tmp_path / "b.json", ft06_doc)
    first = ft06_doc["operations"][0]
    # A breakdown after the horizon leaves the plan valid; one under the first operation does not.
    later = write(tmp_path / "d1.json", {"time": 1, "events": [
        {"kind": "machine_breakdown", "machine": 0, "start": ft06_doc["makespan"], "duration": 5}]})
    assert main(["validate", "--instance", "ft06", "--schedule", base, "--disruption", later,
                 "--baseline", base]) == 0
    under = write(tmp_path / "d2.json", {"time": 0, "events": [
        {"kind": "machine_breakdown", "machine": first["machine"], "start": first["start"], "duration": 1}]})
    capsys.readouterr()
    assert main(["validate", "--instance", "ft06", "--schedule", base, "--disruption", under,
                 "--baseline", base, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {"code": "downtime_overlap", "job": first["job"], "step": first["step"]} in [
        {"code": v["code"], "job": v["scope"]["job"], "step": v["scope"]["step"]} for v in report["violations"]]


def _edit(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    target: Any = doc
    for part in path[:-1]:
        target = target[part]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


@pytest.mark.parametrize(("path", "value", "fragment"), [
    (("operations", 3, "start"), "5", "at operations[3].start: Input should be a valid integer, got '5'"),
    (("operations", 2, "end"), 7.5, "at operations[2].end: Input should be a valid integer"),
    (("operations", 1, "machine"), True, "at operations[1].machine"),
    (("makespan",), KeyError, "at makespan: Field required"),
    (("operations", 0, "job"), KeyError, "at operations[0].job: Field required"),
    (("operations", 4, "job"), 17, "at operations[4]: job 17 does not exist (instance ft06 has jobs 0..5)"),
    (("operations", 5, "step"), 6, "at operations[5]: job 4 has no step 6 (it has steps 0..5)"),
    (("operations", 5, "start"), 2**50, "at operations[5]: start"),
    (("operations", 5, "start"), 2**62, "line 1 column"),
    (("operations",), {"a": 1}, "at operations: Input should be a valid list"),
])
def test_bad_schedule_exit_2(tmp_path: Path, capsys: Capture, ft06_doc: dict[str, Any], path: tuple[Any, ...],
                             value: Any, fragment: str) -> None:
    s = write(tmp_path / "s.json", _edit(ft06_doc, path, value))
    assert main(["validate", "--instance", "ft06", "--schedule", s]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith(f"alas: error: {s} ") and fragment in err, err


@pytest.mark.parametrize(("content", "fragment"), [
    ("[1, 2]", "schedule file must hold a JSON object, not a list"),
    ('{"instance": "ft06", "oper', "invalid JSON in schedule file"),
    ("", "invalid JSON in schedule file"),
])
def test_unparseable_schedule_exit_2(tmp_path: Path, capsys: Capture, content: str, fragment: str) -> None:
    s = write(tmp_path / "s.json", content)
    assert main(["validate", "--instance", "ft06", "--schedule", s]) == 2
    err = capsys.readouterr().err
    assert fragment in err and s in err and "Traceback" not in err


@pytest.mark.parametrize(("event", "fragment"), [
    ({"kind": "machine_breakdown", "machine": 9, "start": 1, "duration": 2}, "at events[0]: machine 9 does not"),
    ({"kind": "machine_breakdown", "machine": 1, "start": 1, "duration": -2}, "at events[0]: negative duration"),
    ({"kind": "machine_breakdown", "machine": 1, "start": 1}, "at events[0].duration: Field required"),
    ({"kind": "duration_change", "job": 2, "step": 8, "duration": 3}, "(job 2, step 8) does not exist"),
    ({"kind": "meteor", "job": 2}, "at events[0]: Input tag 'meteor'"),
])
def test_bad_disruption_exit_2(tmp_path: Path, capsys: Capture, ft06_doc: dict[str, Any], event: dict[str, Any],
                               fragment: str) -> None:
    s = write(tmp_path / "s.json", ft06_doc)
    d = write(tmp_path / "d.json", {"time": 3, "events": [event]})
    assert main(["validate", "--instance", "ft06", "--schedule", s, "--disruption", d, "--baseline", s]) == 2
    err = capsys.readouterr().err
    assert fragment in err and d in err and "Traceback" not in err, err


def test_bad_baseline_and_instance_exit_2(tmp_path: Path, capsys: Capture, ft06_doc: dict[str, Any]) -> None:
    s = write(tmp_path / "s.json", ft06_doc)
    d = write(tmp_path / "d.json", {"time": 3, "events": [{"kind": "duration_change", "job": 0, "step": 5,
                                                          "duration": 9}]})
    b = write(tmp_path / "b.json", _edit(json.loads(json.dumps(ft06_doc)), ("operations", 2, "job"), -1))
    assert main(["validate", "--instance", "ft06", "--schedule", s, "--disruption", d, "--baseline", b]) == 2
    assert f"{b} at operations[2]: job -1 does not exist" in capsys.readouterr().err
    assert main(["validate", "--instance", "nosuch", "--schedule", s]) == 2
    assert "unknown instance 'nosuch'" in capsys.readouterr().err
    assert main(["validate", "--instance", "ft06", "--schedule", s, "--baseline", s]) == 2
    assert "--baseline only matters with --disruption" in capsys.readouterr().err


def test_bench_validator_json(capsys: Capture) -> None:
    assert main(["bench", "validator", "--instance", "ft06", "--repeat", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["scenario"] for r in rows] == ["static", "disruption"]
    assert all(r["valid"] and r["operations"] == 36 and r["repeat"] == 2 and r["ops_per_second"] > 0
               for r in rows)


def test_bench_validator_table(capsys: Capture) -> None:
    assert main(["bench", "validator", "--instance", "ft06", "--repeat", "1"]) == 0
    assert "operations/s" in capsys.readouterr().out
