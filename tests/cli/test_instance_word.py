"""The instance as a word or as ``--instance`` on every command that reads a plan of one (validate, disrupt,
repair, gantt), as `alas solve ft06` and `alas run ft06` take it: the same outputs either way, one of the two
required, and two different names refused before anything is read or written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.benchmarks.validator import round_robin_schedule
from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def plan(tmp_path: Path) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps(round_robin_schedule(get_instance("ft06")).to_json()))
    return str(path)


def commands(plan: str, out: Path) -> dict[str, list[str]]:
    """Each command's arguments but the instance, writing under ``out``."""
    disruption = str(out.parent / "d.json")
    return {"validate": ["validate", "--schedule", plan, "--json"],
            "disrupt": ["disrupt", "--schedule", plan, "--kind", "breakdown", "-o", str(out / "d.json"), "--json"],
            "repair": ["repair", "--schedule", plan, "--disruption", disruption, "--method", "aor",
                       "-o", str(out / "r.json"), "--json"],
            "gantt": ["gantt", "--schedule", plan, "-o", str(out / "g.png")]}


@pytest.mark.parametrize("command", ["validate", "disrupt", "repair", "gantt"])
def test_the_word_and_the_flag_give_the_same_outputs(command: str, plan: str, tmp_path: Path,
                                                     capsys: Capture) -> None:
    assert main(["disrupt", "ft06", "--schedule", plan, "--kind", "breakdown", "-o", str(tmp_path / "d.json")]) == 0
    outputs = {}
    for form in ("word", "flag", "both"):
        out = tmp_path / form
        out.mkdir()
        args = commands(plan, out)[command]
        given = {"word": ["ft06"], "flag": ["--instance", "ft06"], "both": ["ft06", "--instance", "ft06"]}[form]
        capsys.readouterr()
        assert main([args[0], *given, *args[1:]]) == 0
        printed = capsys.readouterr().out.replace(str(out), "OUT")
        files = {p.name: p.read_bytes() for p in out.iterdir()}  # the JSON written, and gantt's PNG
        if command == "repair":  # the repair's own wall time is the one figure that differs between runs
            printed = json.dumps({**json.loads(printed), "seconds": None})
            files = {k: json.dumps({**json.loads(v), "seconds": None}).encode() for k, v in files.items()}
        outputs[form] = (printed, files)
        assert bool(files) is (command != "validate")
    assert outputs["word"] == outputs["flag"] == outputs["both"]


@pytest.mark.parametrize("command", ["validate", "disrupt", "repair", "gantt"])
def test_no_instance_or_two_different_ones_are_a_usage_error_that_writes_nothing(
        command: str, plan: str, tmp_path: Path, capsys: Capture) -> None:
    args = commands(plan, tmp_path)[command]
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert (f"alas {command}: error: an instance is required: a bundled name (ft06, ta01) or an instance file, "
            "as a word or as --instance\n" in err)
    with pytest.raises(SystemExit) as done:
        main([args[0], "ft10", "--instance", "ft06", *args[1:]])
    assert done.value.code == 2
    assert (f"alas {command}: error: the word 'ft10' and --instance 'ft06' name different instances: give one\n"
            in capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json"]
