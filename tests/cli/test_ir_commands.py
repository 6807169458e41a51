"""`alas ir schema`, `alas ir validate`, `alas bench runtime`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from alas_argo.cli import main

GOOD = """
name: demo
nodes:
  - {id: solve, role: planner, output: {type: object, required: [schedule]}}
  - {id: check, role: validator}
edges:
  - {source: solve, target: check}
"""

BAD = """
name: demo
nodes:
  - {id: solve}
  - {id: commit, role: store, sideEffect: write}
  - {id: pick, role: r, join: any_of}
edges:
  - {source: solve, target: commit}
  - {source: commit, target: pick}
"""


def test_schema_prints_the_workflow_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ir", "schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "Workflow" and "nodes" in schema["properties"]


def test_validate_a_valid_yaml_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "wf.yaml"
    f.write_text(GOOD)
    assert main(["ir", "validate", str(f)]) == 0
    assert "valid workflow 'demo' (2 nodes)" in capsys.readouterr().out


def test_validate_lists_every_problem_naming_nodes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "wf.yml"
    f.write_text(BAD)
    assert main(["ir", "validate", str(f)]) == 1
    out = capsys.readouterr().out
    assert "node solve: task node needs a role [missing_role]" in out
    assert "node commit: write side effect without a compensation [missing_compensation]" in out
    assert "node pick: any_of join needs at least 2 candidates, has 1 [bad_join]" in out
    assert "3 problem(s): invalid" in out


def test_validate_json_output_and_stricter_contracts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    f = tmp_path / "wf.json"
    f.write_text(json.dumps(yaml.safe_load(GOOD)))
    assert main(["ir", "validate", str(f), "--json", "--require-output-contracts"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict == {"valid": False, "problems": [
        {"code": "missing_contract", "node": "check", "message": "node has no output contract"}]}


@pytest.mark.parametrize(("name", "text", "message"), [
    ("missing.yaml", None, "workflow file not found"),
    ("broken.json", "{nope", "invalid JSON"),
    ("broken.yaml", "a: [1, 2", "invalid YAML"),
    ("list.yaml", "- 1\n- 2\n", "must be a mapping"),
])
def test_unreadable_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
                                 text: str | None, message: str) -> None:
    f = tmp_path / name
    if text is not None:
        f.write_text(text)
    assert main(["ir", "validate", str(f)]) == 2
    err = capsys.readouterr().err
    assert message in err and name in err and err.count("\n") == 1


def test_bench_runtime_reports_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "runtime", "--nodes", "20", "--repeats", "1", "--tasks", "2", "--seconds", "0.02",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [o["shape"] for o in doc["overhead"]] == ["chain", "fan"]
    assert all(o["nodes"] == 20 and o["ms_per_node"] > 0 for o in doc["overhead"])
    two = next(s for s in doc["speedup"] if s["pool"] == "process" and s["workers"] == 2)
    assert 1 <= two["distinct_pids"] <= 2 and two["tasks"] == 2 and two["cpu_s"] > 0


def test_bench_runtime_rejects_a_cpu_time_that_is_not_positive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:  # the seconds flag type every wait flag has: argparse's exit 2
        main(["bench", "runtime", "--seconds", "0"])
    assert done.value.code == 2
    assert capsys.readouterr().err.endswith(
        "alas bench runtime: error: argument --seconds: must be above 0 and at most 31536000 seconds (a year), got 0\n")
