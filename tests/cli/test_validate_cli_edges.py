"""`alas validate` and `alas bench validator` (alas_argo.cli.validating) at the edges mutation testing found
unpinned: the violation table cell by cell against the JSON report, its 50-row cap, user text printed as is;
the bounds a schedule entry is checked against (the first job past the end, +-MAX_TIME); the one-line error of a
malformed file (no ", got" for a missing field, the input clipped, the count of further errors) and the word
naming a baseline or disruption file; a baseline that decides the verdict; the counts of a file that is not a
plan of its instance; the benchmark's table, exit code and defaults; and the command line the help shows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import alas_argo.cli.validating as validating
from alas_argo.benchmarks.validator import ValidatorTiming, round_robin_schedule
from alas_argo.cli import build_parser, main
from alas_argo.cli.flag_values import MAX_REPEATS
from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.limits import MAX_TIME

Capture = pytest.CaptureFixture[str]


def write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def plan_of(name: str) -> dict[str, Any]:
    return round_robin_schedule(get_instance(name)).to_json()


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wide terminal: rich's table rows and argparse's usage each stay on one line."""
    monkeypatch.setenv("COLUMNS", "250")


def table_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("│").split("│")] for line in text.splitlines()
            if line.strip().startswith("│")]


def test_the_table_shows_each_violation_as_the_json_report_does(tmp_path: Path, capsys: Capture) -> None:
    doc = plan_of("ft06")
    doc["operations"][0]["end"] += 1  # wrong duration, then a precedence and a machine overlap behind it
    doc["instance"] = "[b]x"  # rich markup in user text is printed, not interpreted
    s = write(tmp_path / "s.json", doc)
    assert main(["validate", "ft06", "--schedule", s, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert main(["validate", "ft06", "--schedule", s]) == 1
    text = capsys.readouterr().out

    def cell(scope: dict[str, int], *keys: str) -> str:
        return "/".join(str(scope[k]) for k in keys if k in scope) or "-"

    expected = [[v["code"], cell(v["scope"], "job", "step"), cell(v["scope"], "machine"),
                 cell(v["scope"], "other_job", "other_step"), v["message"]] for v in report["violations"]]
    assert [r[0] for r in expected] == ["wrong_duration", "precedence", "machine_overlap"]
    assert expected[0][3] == "-" and expected[1][2] == "-" and expected[2][3] == "0/0"
    assert table_rows(text) == expected
    lines = [line.strip() for line in text.splitlines()]
    assert "3 violation(s) in the schedule for ft06" in lines
    assert [c.strip() for c in next(line for line in lines if line.startswith("┃")).strip("┃").split("┃")] == [
        "code", "job/step", "machine", "with", "message"]
    assert "warning: instance_mismatch: schedule is for instance '[b]x', checked against 'ft06'" in lines
    assert lines[-1] == "invalid: wrong_duration 1, precedence 1, machine_overlap 1"


@pytest.mark.parametrize(("shortened", "more"), [(50, None), (51, "... 1 more (use --json to see all)"),
                                                  (60, "... 10 more (use --json to see all)")])
def test_the_table_holds_50_rows_and_counts_the_rest(tmp_path: Path, capsys: Capture, shortened: int,
                                                     more: str | None) -> None:
    doc = plan_of("ta01")
    # Operations ending before the makespan, made one unit shorter: a wrong duration each and nothing else.
    cut = [o for o in doc["operations"] if o["end"] < doc["makespan"] and o["end"] - o["start"] > 1][:shortened]
    assert len(cut) == shortened
    for o in cut:
        o["end"] -= 1
    s = write(tmp_path / "s.json", doc)
    assert main(["validate", "ta01", "--schedule", s]) == 1
    text = capsys.readouterr().out
    assert len(table_rows(text)) == 50
    assert f"{shortened} violation(s) in the schedule for ta01" in text
    assert ("more (use --json" in text) is (more is not None)
    if more is not None:
        assert more in text.splitlines()
    assert text.splitlines()[-1] == f"invalid: wrong_duration {shortened}"


def test_the_valid_line_prints_the_instance_name_as_is(tmp_path: Path, capsys: Capture) -> None:
    inst = get_instance("ft06").model_copy(update={"name": "[b]ft"})
    i = write(tmp_path / "i.json", inst.model_dump(mode="json"))
    doc = plan_of("ft06")
    doc["instance"] = "[b]ft"
    s = write(tmp_path / "s.json", doc)
    assert main(["validate", i, "--schedule", s]) == 0
    assert capsys.readouterr().out.splitlines() == [f"valid: 36 operations of [b]ft, makespan {doc['makespan']}"]


@pytest.mark.parametrize(("field", "value", "error"), [
    ("job", 6, "job 6 does not exist (instance ft06 has jobs 0..5)"),  # the first job past the end
    ("start", MAX_TIME + 1, f"start {MAX_TIME + 1} is out of range (+-{MAX_TIME})"),
    ("end", -MAX_TIME - 1, f"end {-MAX_TIME - 1} is out of range (+-{MAX_TIME})"),
])
def test_an_entry_just_out_of_bounds_is_refused(tmp_path: Path, capsys: Capture, field: str, value: int,
                                                error: str) -> None:
    doc = plan_of("ft06")
    doc["operations"][2][field] = value
    s = write(tmp_path / "s.json", doc)
    assert main(["validate", "ft06", "--schedule", s]) == 2
    assert capsys.readouterr().err.strip() == f"alas: error: {s} at operations[2]: {error}"


def test_a_time_of_max_time_is_checked_not_refused(tmp_path: Path, capsys: Capture) -> None:
    doc = plan_of("ft06")
    doc["operations"][2]["end"] = MAX_TIME
    s = write(tmp_path / "s.json", doc)
    assert main(["validate", "ft06", "--schedule", s, "--json"]) == 1
    codes = {v["code"] for v in json.loads(capsys.readouterr().out)["violations"]}
    assert "wrong_duration" in codes


def test_a_missing_field_has_no_got_and_further_errors_are_counted(tmp_path: Path, capsys: Capture) -> None:
    doc = plan_of("ft06")
    del doc["makespan"]
    doc["operations"][0]["start"] = "x"
    doc["operations"][1]["end"] = "y"
    s = write(tmp_path / "s.json", doc)
    assert main(["validate", "ft06", "--schedule", s]) == 2
    assert capsys.readouterr().err.strip() == f"alas: error: {s} at makespan: Field required (and 2 more)"


def test_a_second_error_is_counted_as_one_more(tmp_path: Path, capsys: Capture) -> None:
    doc = plan_of("ft06")
    doc["operations"][0]["start"] = "x"
    doc["operations"][1]["end"] = "y"
    s = write(tmp_path / "s.json", doc)
    assert main(["validate", "ft06", "--schedule", s]) == 2
    assert capsys.readouterr().err.strip() == (
        f"alas: error: {s} at operations[0].start: Input should be a valid integer, got 'x' (and 1 more)")


def test_a_baseline_without_a_disruption_is_refused_in_one_line(tmp_path: Path, capsys: Capture) -> None:
    s = write(tmp_path / "s.json", plan_of("ft06"))
    assert main(["validate", "ft06", "--schedule", s, "--baseline", s]) == 2
    assert capsys.readouterr().err.strip() == "alas: error: --baseline only matters with --disruption"


def test_one_error_is_counted_as_none_more_and_its_input_is_clipped(tmp_path: Path, capsys: Capture) -> None:
    doc = plan_of("ft06")
    doc["operations"][0]["start"] = "x" * 200
    s = write(tmp_path / "s.json", doc)
    assert main(["validate", "ft06", "--schedule", s]) == 2
    got = ", got " + repr("x" * 200)
    assert capsys.readouterr().err.strip() == (
        f"alas: error: {s} at operations[0].start: Input should be a valid integer{got[:80]}")


def test_a_baseline_or_disruption_that_is_no_object_is_named_by_its_role(tmp_path: Path, capsys: Capture) -> None:
    s = write(tmp_path / "s.json", plan_of("ft06"))
    d = write(tmp_path / "d.json", {"time": 1, "events": [
        {"kind": "machine_breakdown", "machine": 0, "start": 500, "duration": 1}]})
    bad = write(tmp_path / "bad.json", [1])
    assert main(["validate", "ft06", "--schedule", s, "--disruption", d, "--baseline", bad]) == 2
    assert capsys.readouterr().err.strip() == (
        f"alas: error: {bad}: baseline file must hold a JSON object, not a list")
    assert main(["validate", "ft06", "--schedule", s, "--disruption", bad]) == 2
    assert capsys.readouterr().err.strip() == (
        f"alas: error: {bad}: disruption file must hold a JSON object, not a list")


def test_the_baseline_decides_whether_a_started_operation_may_move(tmp_path: Path, capsys: Capture) -> None:
    base = plan_of("ft06")
    last = max(base["operations"], key=lambda o: o["end"])  # the last step of its job, last on its machine
    moved = json.loads(json.dumps(base))
    op = next(o for o in moved["operations"] if (o["job"], o["step"]) == (last["job"], last["step"]))
    op["start"] += 1
    op["end"] += 1
    moved["makespan"] += 1
    s, b = write(tmp_path / "s.json", moved), write(tmp_path / "b.json", base)
    d = write(tmp_path / "d.json", {"time": last["start"] + 1, "events": [
        {"kind": "machine_breakdown", "machine": 0, "start": base["makespan"] + 5, "duration": 1}]})
    assert main(["validate", "ft06", "--schedule", s, "--disruption", d]) == 0  # no baseline: not checked
    capsys.readouterr()
    assert main(["validate", "ft06", "--schedule", s, "--disruption", d, "--baseline", b, "--json"]) == 1
    [v] = json.loads(capsys.readouterr().out)["violations"]
    assert (v["code"], v["scope"]["job"], v["scope"]["step"]) == ("frozen_moved", last["job"], last["step"])


def test_a_file_that_is_not_a_plan_of_its_instance_is_counted_by_code(tmp_path: Path) -> None:
    doc = plan_of("ft06")
    del doc["operations"][0:2]
    doc["operations"][0]["machine"] = (doc["operations"][0]["machine"] + 1) % 6
    s = write(tmp_path / "s.json", doc)
    with pytest.raises(InputError) as caught:
        validating.load_plan_of(s, get_instance("ft06"))
    assert caught.value.where == s
    assert str(caught.value) == (f"{s}: the schedule (for ft06) is not a plan of ft06: missing_operation x2, "
                                 "wrong_machine x1; first: operation (job 0, step 0) on machine 2 has no entry")


def _timing(scenario: str, valid: bool) -> ValidatorTiming:
    return ValidatorTiming(instance="ft06", size="6x6", scenario=scenario, operations=36, repeat=3,
                           median_seconds=0.0015, best_seconds=0.0005, ops_per_second=24000.0, valid=valid)


def test_bench_validator_table_and_exit_1_on_an_invalid_verdict(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: Capture) -> None:
    """A false verdict of the benchmark's own valid schedule is a bug the exit code must show."""
    monkeypatch.setattr(validating, "benchmark_validator",
                        lambda instance, repeat: [_timing("static", True), _timing("disruption", False)])
    assert main(["bench", "validator", "--instance", "ft06", "--repeat", "3"]) == 1
    text = capsys.readouterr().out
    assert "validator throughput on ft06 (6x6, 36 operations, 3 repeats)" in " ".join(text.split())  # wrapped
    header = next(line for line in text.splitlines() if line.startswith("┃"))
    assert [c.strip() for c in header.strip("┃").split("┃")] == [
        "scenario", "median ms", "best ms", "operations/s", "valid"]
    assert table_rows(text) == [["static", "1.500", "0.500", "24,000", "yes"],
                                ["disruption", "1.500", "0.500", "24,000", "NO"]]
    row = next(line for line in text.splitlines() if "static" in line)
    scenario_cell = row.strip().strip("│").split("│")[0]
    assert scenario_cell.endswith(" static ") and scenario_cell.startswith("   ")  # right-justified
    monkeypatch.setattr(validating, "benchmark_validator", lambda instance, repeat: [_timing("static", True)])
    assert main(["bench", "validator", "--instance", "ft06", "--repeat", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [_timing("static", True).model_dump(mode="json")]


def test_bench_validator_defaults_and_bounds(capsys: Capture) -> None:
    args = build_parser(["bench", "validator"]).parse_args(["bench", "validator"])
    assert (args.instance, args.repeat, args.json) == ("ta71", 50, False)
    with pytest.raises(SystemExit) as caught:
        main(["bench", "validator", "--instance", "ft06", "--repeat", str(MAX_REPEATS + 1)])
    assert caught.value.code == 2
    assert "--repeat" in capsys.readouterr().err


def test_the_command_line_and_the_exit_codes_the_help_states(capsys: Capture) -> None:
    with pytest.raises(SystemExit):
        main(["validate", "--help"])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("usage: alas validate [-h] [--instance I] --schedule S [--disruption D] "
                                   "[--baseline B] [--json] [I]")
    assert "Exit 0 valid, 1 invalid, 2 bad input." in " ".join(out.split())
    with pytest.raises(SystemExit) as caught:
        main(["validate", "ft06"])
    assert caught.value.code == 2
    assert "the following arguments are required: --schedule" in capsys.readouterr().err
