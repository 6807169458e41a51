"""`alas ir schema|validate|export` (and `alas bench runtime`'s text) at their edges: each refusal's message and
`where` (the file, with the line and column when YAML knows them), the bracket-depth gate at exactly its limit,
the verdict's exact lines and JSON, and what `export --out` writes (the document, atomically, in the requested
format) or refuses. Added from the mutation run of `alas_argo/cli/ir_commands.py` (h-ircli, 2026-12-06)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo.cli import main
from alas_argo.cli.ir_commands import load_document, load_yaml
from alas_argo.engines.rendering import load_definitions
from alas_argo.errors import InputError
from alas_argo.json_limits import MAX_DEPTH

GOOD = {"name": "demo", "nodes": [{"id": "solve", "role": "planner"}, {"id": "check", "role": "validator"}],
        "edges": [{"source": "solve", "target": "check"}]}


def _refusal(call: Any) -> InputError:
    with pytest.raises(InputError) as caught:
        call()
    return caught.value


# -- load_document / load_yaml -------------------------------------------------------------------------------


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "gone.yaml"
    err = _refusal(lambda: load_document(str(path)))
    assert (err.message, err.where) == ("workflow file not found", str(path))


def test_a_file_that_is_not_utf8_or_not_a_file_is_unreadable(tmp_path: Path) -> None:
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9\n")
    err = _refusal(lambda: load_document(str(latin)))
    assert err.where == str(latin) and err.message.startswith("cannot read workflow file: 'utf-8' codec")
    err = _refusal(lambda: load_document(str(tmp_path)))  # a directory: an OSError other than not-found
    assert err.where == str(tmp_path) and err.message.startswith("cannot read workflow file: [Errno 21]")


@pytest.mark.parametrize("name", ["w.json", "W.JSON"])
def test_the_json_suffix_in_any_case_is_read_as_json(tmp_path: Path, name: str) -> None:
    """`name: demo` is YAML but not JSON: a `.json` file, whatever the suffix's case, must be JSON."""
    path = tmp_path / name
    path.write_text("name: demo\n")
    err = _refusal(lambda: load_document(str(path)))
    assert "invalid JSON" in err.message and str(path) in str(err.where)
    path.write_text(json.dumps(GOOD))
    assert load_document(str(path)) == GOOD


def test_a_yaml_suffix_or_none_is_read_as_yaml(tmp_path: Path) -> None:
    for name in ("w.yml", "w.yaml", "workflow"):
        path = tmp_path / name
        path.write_text(yaml.safe_dump(GOOD))
        assert load_document(str(path)) == GOOD


def test_bracket_depth_is_refused_past_the_limit_not_at_it() -> None:
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    doc = load_yaml(deepest, where="w.yaml")
    for _ in range(MAX_DEPTH - 1):
        doc = doc[0]
    assert doc == []
    err = _refusal(lambda: load_yaml("[" + deepest + "]", where="w.yaml"))
    assert (err.message, err.where) == (f"invalid YAML: nested more than {MAX_DEPTH} levels deep", "w.yaml")
    # Each closing bracket lowers the depth by one, no more: two shallow lists before a list 65 deep (in all)
    # are still refused by the gate (the document check after parsing says it without "invalid YAML").
    err = _refusal(lambda: load_yaml("[" + "[], " * 2 + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "]", where="w.yaml"))
    assert err.message == f"invalid YAML: nested more than {MAX_DEPTH} levels deep"
    # Closing brackets lower the depth again: many shallow lists are no deep one.
    assert load_yaml("[" + "[], " * (MAX_DEPTH + 5) + "[]]", where="w.yaml") == [[]] * (MAX_DEPTH + 6)


def test_a_yaml_syntax_error_names_its_line_and_column() -> None:
    err = _refusal(lambda: load_yaml("a:\n  b: c\n d: e\n", where="w.yaml"))
    assert (err.message, err.where) == ("invalid YAML: did not find expected key", "w.yaml line 3 column 2")
    err = _refusal(lambda: load_yaml("x: !!python/object:os.system ls", where="w.yaml"))  # the safe loader only
    assert err.where == "w.yaml line 1 column 4"
    assert err.message == "invalid YAML: could not determine a constructor for the tag " \
                          "'tag:yaml.org,2002:python/object:os.system'"


def test_a_value_yaml_cannot_convert_is_refused_in_one_short_line() -> None:
    err = _refusal(lambda: load_yaml("t: 2001-13-45", where="w.yaml"))
    assert (err.message, err.where) == ("invalid YAML: month must be in 1..12", "w.yaml")
    err = _refusal(lambda: load_yaml("n: " + "9" * 5000, where="w.yaml"))
    assert err.where == "w.yaml" and err.message.startswith("invalid YAML: Exceeds the limit (4300 digits)")
    assert len(err.message) == len("invalid YAML: ") + 120  # the converter's long message, cut


def test_the_document_limits_apply_after_parsing() -> None:
    err = _refusal(lambda: load_yaml("a: .nan", where="w.yaml"))
    assert err.where is not None and str(err.where).startswith("w.yaml")


# -- ir schema / ir validate ---------------------------------------------------------------------------------


def test_schema_prints_exactly_the_workflow_schema(capsys: pytest.CaptureFixture[str]) -> None:
    from alas_argo.ir.schema import workflow_schema

    assert main(["ir", "schema"]) == 0
    assert json.loads(capsys.readouterr().out) == workflow_schema()


def test_a_valid_workflow_is_one_line_and_json_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wf.json"
    path.write_text(json.dumps(GOOD))
    assert main(["ir", "validate", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: valid workflow 'demo' (2 nodes)\n"
    assert main(["ir", "validate", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"valid": True, "problems": []}


def test_each_problem_is_a_line_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "wf.json"
    path.write_text(json.dumps({**GOOD, "nodes": [{"id": "solve"}, {"id": "check", "role": "validator"}]}))
    assert main(["ir", "validate", str(path)]) == 1
    assert capsys.readouterr().out == (f"{path}: node solve: task node needs a role [missing_role]\n"
                                       "1 problem(s): invalid\n")
    # Without the flag, a missing output contract is no problem; with it, one per node.
    assert main(["ir", "validate", str(path), "--json"]) == 1
    assert [p["code"] for p in json.loads(capsys.readouterr().out)["problems"]] == ["missing_role"]


def test_a_document_that_is_not_a_mapping_names_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    assert main(["ir", "validate", str(path)]) == 2
    assert capsys.readouterr().err == f"alas: error: {path}: a workflow document must be a mapping\n"


# -- ir export -----------------------------------------------------------------------------------------------


def test_export_writes_the_document_atomically_and_says_where(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    doc = load_definitions()["alas-plan"]().to_json()
    out = tmp_path / "new" / "dir" / "plan.yaml"  # the directories are made
    assert main(["ir", "export", "alas-plan", "--format", "yaml", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"alas-plan -> {out}\n"
    # Block style in the definition's key order, as `yaml.safe_dump(sort_keys=False)` writes it.
    assert out.read_text() == yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)
    assert list(yaml.safe_load(out.read_text())) == list(doc)
    assert sorted(p.name for p in out.parent.iterdir()) == ["plan.yaml"]  # no temp file left
    assert main(["ir", "export", "alas-plan", "-o", str(out.with_suffix(".json"))]) == 0
    assert out.with_suffix(".json").read_text() == json.dumps(doc, indent=2) + "\n"


def test_export_prints_indented_json_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    doc = load_definitions()["alas-repair"]().to_json()
    assert main(["ir", "export", "alas-repair"]) == 0
    assert capsys.readouterr().out == json.dumps(doc, indent=2) + "\n"


def test_export_reads_other_definitions_from_workflows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    defs = tmp_path / "defs"
    defs.mkdir()
    (defs / "__init__.py").write_text(
        "from alas_argo.ir import Node, Workflow\n"
        "WORKFLOWS = {'mine': lambda: Workflow(name='mine', nodes=[Node(id='only', role='validator')])}\n")
    try:
        assert main(["ir", "export", "mine", "--workflows", str(defs)]) == 0
        assert json.loads(capsys.readouterr().out)["name"] == "mine"
        assert main(["ir", "export", "alas-plan", "--workflows", str(defs)]) == 2  # only that directory's
        assert "unknown workflow 'alas-plan' (shipped: mine)" in capsys.readouterr().err
    finally:
        sys.modules.pop("workflows", None)  # the next test loads the shipped definitions again


def test_export_names_an_unknown_workflow_and_the_shipped_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ir", "export", "alas-nope"]) == 2
    assert capsys.readouterr().err == ("alas: error: alas ir export: unknown workflow 'alas-nope' "
                                       f"(shipped: {', '.join(sorted(load_definitions()))})\n")


def test_export_that_cannot_write_names_the_file_and_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "plan.json"

    def refuse(self: Path, target: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "replace", refuse)
    assert main(["ir", "export", "alas-plan", "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"alas: error: {out}: cannot write: Permission denied\n"
    assert not out.exists()


def test_export_refuses_an_out_that_is_a_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ir", "export", "alas-plan", "-o", str(tmp_path)]) == 2
    assert "--out: is a directory" in capsys.readouterr().err


# -- bench runtime (text) ------------------------------------------------------------------------------------


def test_bench_runtime_text_shows_every_figure(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The report itself is measured elsewhere; here, what the text prints of a fixed one (and what it passes)."""
    import alas_argo.benchmarks.runtime as runtime

    seen: list[tuple[Any, ...]] = []
    doc = {"cpu_count": 2, "load_average_1m": 1.5, "target_ms_per_node": 1.0, "overhead_target_met": False,
           "overhead": [{"shape": "chain", "nodes": 20, "run_ms": 12.3456, "ms_per_node": 0.61728,
                         "validate_ms": 0.5}],
           "speedup": [{"pool": "process", "workers": 2, "tasks": 4, "wall_s": 0.5, "cpu_s": 0.9,
                        "busy_cores": 1.8, "distinct_pids": 2}],
           "process_speedup_2_over_1": 1.75}

    def report(*args: Any) -> dict[str, Any]:
        seen.append(args)
        return doc

    monkeypatch.setattr(runtime, "report", report)
    assert main(["bench", "runtime", "--nodes", "20", "--tasks", "4", "--seconds", "0.5", "--repeats", "2"]) == 0
    assert seen == [(20, 4, 0.5, 2)]
    assert capsys.readouterr().out.splitlines() == [
        "cpu count 2, load average (1 min) 1.5",
        "overhead (no-op nodes, thread pool):",
        "  chain      20 nodes  run     12.35 ms  0.6173 ms/node  (validation 0.50 ms)",
        "  target <= 1.0 ms/node: MISSED",
        "parallel speed-up (independent CPU-bound nodes):",
        "  process x2  4 tasks  wall 0.500 s  cpu 0.900 s  busy cores 1.80  processes 2",
        "  process pool speed-up 2 workers over 1: 1.75x",
    ]
    doc["overhead_target_met"] = True
    assert main(["bench", "runtime", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == doc and seen[-1] == (500, 4, 0.25, 3)  # the defaults
    assert main(["bench", "runtime"]) == 0
    assert "  target <= 1.0 ms/node: met" in capsys.readouterr().out.splitlines()
    # As every other seconds flag, above 0 and at most a year: 1e20 was accepted and ran until killed.
    for value in ("-1", "1e20"):
        with pytest.raises(SystemExit) as done:
            main(["bench", "runtime", "--seconds", value])
        assert done.value.code == 2
        assert capsys.readouterr().err.endswith("alas bench runtime: error: argument --seconds: must be above 0 and "
                                                f"at most 31536000 seconds (a year), got {value}\n")
    assert seen[-1] == (500, 4, 0.25, 3)  # no run started


@pytest.mark.parametrize("flag", ["--nodes", "--repeats", "--tasks"])
def test_bench_runtime_counts_run_from_1_to_max_repeats(flag: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each count is a whole number from 1 to MAX_REPEATS: the ends pass, one past either is refused (exit 2)."""
    import alas_argo.benchmarks.runtime as runtime
    from alas_argo.cli.flag_values import MAX_REPEATS

    seen: list[tuple[Any, ...]] = []

    def report(*args: Any) -> dict[str, Any]:
        seen.append(args)
        return {"fixed": True}

    monkeypatch.setattr(runtime, "report", report)
    for value in (1, MAX_REPEATS):
        assert main(["bench", "runtime", flag, str(value), "--json"]) == 0
    assert len(seen) == 2
    for value in (0, MAX_REPEATS + 1):
        with pytest.raises(SystemExit) as stopped:
            main(["bench", "runtime", flag, str(value), "--json"])
        assert stopped.value.code == 2
    assert len(seen) == 2


def test_export_refuses_a_format_it_does_not_write(capsys: pytest.CaptureFixture[str]) -> None:
    """`--format` is json or yaml: another is a usage error (exit 2), not silently JSON."""
    with pytest.raises(SystemExit) as stopped:
        main(["ir", "export", "alas-plan", "--format", "xml"])
    assert stopped.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "invalid choice: 'xml'" in captured.err
