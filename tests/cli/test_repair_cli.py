"""`alas disrupt`, `alas repair`, `alas gantt`: the flows, the outputs, the exit codes on bad input."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.repair.tabu import KERNEL, kernel
from alas_argo.jssp.schedule import Schedule
from alas_argo.jssp.validate import validate


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "s.json").write_text(json.dumps(dispatch(get_instance("ft06"), "mwkr").to_json()))
    return tmp_path


def test_disrupt_repair_gantt_flow(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, d, r, g = (str(files / n) for n in ("s.json", "d.json", "r.json", "g.png"))
    assert main(["disrupt", "--instance", "ft06", "--schedule", s, "--kind", "breakdown", "--machine", "2",
                 "--at", "0.3", "--length", "0.1", "--out", d]) == 0
    disruption = Disruption.model_validate_json(Path(d).read_text())
    assert disruption.breakdowns[0].machine == 2
    assert "machine 2 down" in capsys.readouterr().out
    assert main(["repair", "--instance", "ft06", "--schedule", s, "--disruption", d, "--method", "lcrp",
                 "--time-limit", "1", "--out", r]) == 0
    out = capsys.readouterr().out
    for words in ("makespan", "moved", "edit radius", "fallback"):
        assert words in out
    doc = json.loads(Path(r).read_text())
    assert doc["method"] == "lcrp" and doc["valid"] is True
    repaired = Schedule.model_validate(doc)
    base = Schedule.model_validate_json(Path(s).read_text())
    assert validate(get_instance("ft06"), repaired, disruption=disruption, baseline=base).valid
    assert main(["gantt", "--instance", "ft06", "--schedule", r, "--before", s, "--disruption", d,
                 "--out", g]) == 0
    assert Path(g).read_bytes()[:4] == b"\x89PNG"


def test_repair_json_output(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, d, r = (str(files / n) for n in ("s.json", "d.json", "r.json"))
    assert main(["disrupt", "--instance", "ft06", "--schedule", s, "--kind", "shock", "--seed", "3",
                 "--out", d, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["events"]
    assert main(["repair", "--instance", "ft06", "--schedule", s, "--disruption", d, "--method", "aor",
                 "--out", r, "--json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["method"] == "aor" and "schedule" not in metrics
    assert metrics["moved_operations"] == json.loads(Path(r).read_text())["moved_operations"]


@pytest.mark.parametrize(("event", "needle"), [
    ({"kind": "machine_breakdown", "machine": 17, "start": 5, "duration": 3}, "machine 17 does not exist"),
    ({"kind": "duration_change", "job": 0, "step": 9, "duration": 3}, "does not exist"),
    ({"kind": "machine_breakdown", "machine": 1, "start": 5, "duration": -3}, "negative"),
    ({"kind": "teleport"}, "bad.json at events[0]: Input tag 'teleport'"),
])
def test_bad_disruption_exits_2(files: Path, capsys: pytest.CaptureFixture[str], event: dict, needle: str) -> None:
    (files / "bad.json").write_text(json.dumps({"time": 5, "events": [event]}))
    rc = main(["repair", "--instance", "ft06", "--schedule", str(files / "s.json"), "--disruption",
               str(files / "bad.json"), "--out", str(files / "r.json")])
    assert rc == 2
    assert needle in capsys.readouterr().err
    assert not (files / "r.json").exists()  # nothing half-written


def test_reveal_time_outside_and_invalid_plan_exit_2(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    change = {"kind": "duration_change", "job": 0, "step": 0, "duration": 5}
    (files / "late.json").write_text(json.dumps({"time": 10_000, "events": [change]}))
    assert main(["repair", "--instance", "ft06", "--schedule", str(files / "s.json"), "--disruption",
                 str(files / "late.json"), "--out", str(files / "r.json")]) == 2
    assert "outside the schedule" in capsys.readouterr().err
    doc = json.loads((files / "s.json").read_text())
    doc["operations"][0]["start"] += 1  # now wrong_duration (end unchanged)
    (files / "broken.json").write_text(json.dumps(doc))
    (files / "d.json").write_text(json.dumps({"time": 5, "events": [{"kind": "duration_change", "job": 0, "step": 5,
                                                                       "duration": 5}]}))
    assert main(["repair", "--instance", "ft06", "--schedule", str(files / "broken.json"), "--disruption",
                 str(files / "d.json"), "--out", str(files / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "invalid before the disruption" in err and "wrong_duration" in err
    assert not (files / "r.json").exists()


def test_missing_file_and_bad_flags_exit_2(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair", "--instance", "ft06", "--schedule", str(files / "nope.json"), "--disruption",
                 str(files / "nope.json"), "--out", str(files / "r.json")]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["disrupt", "--instance", "ft06", "--schedule", str(files / "s.json"), "--kind", "breakdown",
                 "--machine", "x", "--out", str(files / "d.json")]) == 2
    assert main(["disrupt", "--instance", "ft06", "--schedule", str(files / "s.json"), "--kind", "breakdown",
                 "--at", "3", "--out", str(files / "d.json")]) == 2


def test_effort_out_of_range_exits_2_and_writes_nothing(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair", "--instance", "ft06", "--schedule", str(files / "s.json"), "--disruption",
                 str(files / "d.json"), "--effort", "0", "--out", str(files / "r.json")]) == 2
    assert "effort" in capsys.readouterr().err
    assert not (files / "r.json").exists()


def test_disrupt_family_and_several_machines(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, d = str(files / "s.json"), str(files / "d.json")
    assert main(["disrupt", "--instance", "ft06", "--schedule", s, "--family", "multi-breakdown", "--seed", "2",
                 "--out", d]) == 0
    assert "multi-breakdown revealed at" in capsys.readouterr().out
    assert len(Disruption.model_validate_json(Path(d).read_text()).breakdowns) >= 2
    assert main(["disrupt", "--instance", "ft06", "--schedule", s, "--kind", "mixed", "--machines", "2",
                 "--increase", "0.1", "--increase-max", "1.0", "--out", d]) == 0
    assert len(Disruption.model_validate_json(Path(d).read_text()).breakdowns) == 2
    # Neither --kind nor --family: a breakdown, the same one --kind breakdown draws. Both: bad input, nothing written.
    capsys.readouterr()
    assert main(["disrupt", "ft06", "--schedule", s, "--out", d, "--json"]) == 0
    assert main(["disrupt", "ft06", "--schedule", s, "--kind", "breakdown", "--out", str(files / "b.json")]) == 0
    assert Path(d).read_bytes() == (files / "b.json").read_bytes()
    assert len(Disruption.model_validate_json(Path(d).read_text()).breakdowns) == 1
    Path(d).unlink()
    capsys.readouterr()
    assert main(["disrupt", "--instance", "ft06", "--schedule", s, "--kind", "shock", "--family", "mixture",
                 "--out", d]) == 2
    assert "give one of --kind and --family, not both: a family draws the kind too" in capsys.readouterr().err
    assert not Path(d).exists()


def test_gantt_warns_when_the_schedule_names_another_instance(files: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # A schedule that says it is la01's, drawn against ft06: drawn, with the validator's word for it on stderr
    # (it was drawn without one).
    doc = json.loads((files / "s.json").read_text())
    doc["instance"] = "la01"
    (files / "o.json").write_text(json.dumps(doc))
    assert main(["gantt", "--instance", "ft06", "--schedule", str(files / "o.json"), "--out",
                 str(files / "g.png")]) == 0
    captured = capsys.readouterr()
    assert "warning: instance_mismatch: schedule is for instance 'la01', drawn as 'ft06'" in captured.err
    assert (files / "g.png").stat().st_size > 0
    assert main(["gantt", "--instance", "ft06", "--schedule", str(files / "s.json"), "--out",
                 str(files / "g.png")]) == 0
    assert "warning" not in capsys.readouterr().err


@pytest.mark.parametrize(("other", "needle"), [
    # ft10's plan on ft06: jobs ft06 does not have (it raised IndexError from inside the shock's draw).
    ("ft10", "does not exist (instance ft06 has jobs 0..5)"),
    # ft06's shape on other machines (as a plan of ta02 is for ta01): a disruption was drawn without a word.
    ("shuffled", "is not a plan of ft06: wrong_machine"),
    # Fewer operations than ft06 has.
    ("partial", "is not a plan of ft06: missing_operation"),
])
def test_disrupt_refuses_a_plan_of_another_instance_and_writes_nothing(
        files: Path, capsys: pytest.CaptureFixture[str], other: str, needle: str) -> None:
    plan = dispatch(get_instance("ft06"), "mwkr").to_json()
    if other == "shuffled":
        for o in plan["operations"]:
            o["machine"] = (o["machine"] + 1) % 6
    elif other == "partial":
        plan["operations"] = plan["operations"][1:]
    else:
        plan = dispatch(get_instance(other), "mwkr").to_json()
    (files / "o.json").write_text(json.dumps(plan))
    for kind in ("--kind", "shock"), ("--family", "mixture"):
        assert main(["disrupt", "--instance", "ft06", "--schedule", str(files / "o.json"), *kind,
                     "--out", str(files / "d.json")]) == 2
        err = capsys.readouterr().err
        assert needle in err and "o.json" in err and "Traceback" not in err
        assert not (files / "d.json").exists()


def test_disrupt_takes_a_repaired_plan_whose_durations_a_shock_changed(
        files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, d, r = (str(files / n) for n in ("s.json", "d.json", "r.json"))
    assert main(["disrupt", "--instance", "ft06", "--schedule", s, "--kind", "shock", "--share", "1",
                 "--out", d]) == 0
    assert main(["repair", "--instance", "ft06", "--schedule", s, "--disruption", d, "--method", "aor",
                 "--out", r]) == 0
    capsys.readouterr()
    # The plan in force after a shock runs operations longer than the instance says: still ft06's plan.
    assert main(["disrupt", "--instance", "ft06", "--schedule", r, "--kind", "breakdown",
                 "--out", str(files / "d2.json")]) == 0
    assert "revealed at" in capsys.readouterr().out


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--tolerance", "-0.01", "tolerance must be in [0, 0.1]"), ("--tolerance", "0.5", "tolerance must be in [0, 0.1]")])
def test_an_lcrp_option_out_of_range_exits_2_and_writes_nothing(files: Path, capsys: pytest.CaptureFixture[str],
                                                                flag: str, value: str, message: str) -> None:
    assert main(["disrupt", "--instance", "ft06", "--schedule", str(files / "s.json"), "--kind", "breakdown",
                 "--seed", "1", "--out", str(files / "d.json")]) == 0
    capsys.readouterr()
    assert main(["repair", "--instance", "ft06", "--schedule", str(files / "s.json"), "--disruption",
                 str(files / "d.json"), flag, value, "--out", str(files / "r.json")]) == 2
    assert message in capsys.readouterr().err
    assert not (files / "r.json").exists()


def test_streams_are_recorded_with_the_repair(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["disrupt", "--instance", "ft06", "--schedule", str(files / "s.json"), "--kind", "shock",
                 "--seed", "1", "--out", str(files / "d.json")]) == 0
    capsys.readouterr()
    assert main(["repair", "--instance", "ft06", "--schedule", str(files / "s.json"), "--disruption",
                 str(files / "d.json"), "--streams", "2", "--out", str(files / "r.json"), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["limits"]["search_streams"] == 2 and printed["valid"]
    written = json.loads((files / "r.json").read_text())
    assert written["limits"]["search_streams"] == 2


def test_the_disrupt_line_counts_the_operations_a_shock_lengthens(files: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    for share, out in (("0", "one.json"), ("0.5", "many.json")):
        assert main(["disrupt", "--instance", "ft06", "--schedule", str(files / "s.json"), "--kind", "shock",
                     "--share", share, "--seed", "1", "--out", str(files / out)]) == 0
        line = capsys.readouterr().out
        n = len(Disruption.model_validate(json.loads((files / out).read_text())).duration_changes)
        # A share of 0 still lengthens one operation (a shock grows at least one): "1 operation takes longer".
        assert (n == 1) is (share == "0")
        assert f": {n} operation takes longer -> " in line if n == 1 else f": {n} operations take longer -> " in line


def _tabu_case(tmp_path: Path) -> list[str]:
    """A weak plan of ft10 and a shock of it: room for the tabu first edit."""
    inst = get_instance("ft10")
    plan = dispatch(inst, "mwkr")
    (tmp_path / "s.json").write_text(json.dumps(plan.to_json()))
    assert main(["disrupt", "--instance", "ft10", "--schedule", str(tmp_path / "s.json"), "--kind", "shock",
                 "--seed", "2", "--out", str(tmp_path / "d.json")]) == 0
    return ["repair", "--instance", "ft10", "--schedule", str(tmp_path / "s.json"), "--disruption",
            str(tmp_path / "d.json"), "--effort", "0.5", "--seed", "3", "--out", str(tmp_path / "r.json")]


@pytest.mark.skipif(kernel() is None, reason=f"the compiled tabu search ({KERNEL}) is not built: `pip install -e .` "
                    "with a C compiler")
def test_repair_first_edit_tabu(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _tabu_case(tmp_path)
    capsys.readouterr()
    assert main(args) == 0  # the default
    out = capsys.readouterr().out
    assert re.search(r"  tabu first edit \(\d+ iterations, [0-9.]+ s\): makespan \d+ -> \d+", out), out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["valid"] is True and doc["limits"]["first_edit"] == "tabu"
    assert validate(get_instance("ft10"), Schedule.model_validate(doc),
                    disruption=Disruption.model_validate_json((tmp_path / "d.json").read_text()),
                    baseline=Schedule.model_validate_json((tmp_path / "s.json").read_text())).valid
    # The re-dispatch when asked: no search, nothing said of one.
    assert main([*args, "--first-edit", "redispatch"]) == 0
    assert "tabu first edit" not in capsys.readouterr().out
    assert "first_edit" not in json.loads((tmp_path / "r.json").read_text())["limits"]


def test_repair_first_edit_tabu_without_the_compiled_search(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    args = _tabu_case(tmp_path)
    monkeypatch.setitem(sys.modules, KERNEL, None)  # as an install without a C compiler
    capsys.readouterr()
    assert main(args) == 0  # the default, tabu
    captured = capsys.readouterr()
    said = [line for line in captured.out.splitlines() if "tabu first edit" in line]
    assert len(said) == 1 and "is not built" in said[0] and "Traceback" not in captured.err
    assert json.loads((tmp_path / "r.json").read_text())["valid"] is True


def test_repair_refuses_an_unknown_first_edit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = _tabu_case(tmp_path)
    with pytest.raises(SystemExit) as e:
        main([*args, "--first-edit", "genetic"])
    assert e.value.code == 2 and "invalid choice: 'genetic'" in capsys.readouterr().err
