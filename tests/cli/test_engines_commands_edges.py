"""`alas engines matrix|lint`, `alas render [--check]` and `alas submit`'s own argument handling, at their edges:
the exit codes, the exact lines and JSON, which linter reads which file, what render writes (the tree under
--out, the templates into the chart directory when its parent exists) and what it refuses or reports stale, how
`-p` is split and which shipped workflow a rendered file is checked as. Every render here writes under a
temporary --out (never the checkout's workflows/). Added from the mutation run of
`alas_argo/cli/engines_commands.py` (h-ircli, 2026-12-06)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo.cli import main
from alas_argo.engines.rendering import load_definitions, render_all

ROOT = Path(__file__).resolve().parents[2]
RENDERED = render_all(load_definitions(), image="alas:0.1.0")
TEMPLATES = sorted(Path(rel).name for rel in RENDERED if rel.startswith("argo/"))


# -- engines matrix ------------------------------------------------------------------------------------------


def test_matrix_markdown_json_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    from alas_argo.engines.conformance import matrix_json, matrix_markdown

    assert main(["engines", "matrix", "--markdown", "--json"]) == 0  # Markdown wins over JSON
    assert capsys.readouterr().out == matrix_markdown()
    assert main(["engines", "matrix", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == matrix_json()
    assert main(["engines", "matrix"]) == 0
    table = capsys.readouterr().out
    assert "IR feature support per engine (native / approximated / unsupported)" in table
    header = next(line for line in table.splitlines() if line.startswith("┃ feature "))
    assert header.split() == ["┃", "feature", "┃", "IR", "┃", "argo", "┃", "asl", "┃"]
    first = matrix_json()[0]
    # The first two cells: the feature's name, then its IR text (each padded to its column).
    row = next(line for line in table.splitlines()
               if re.match(rf"│ {re.escape(first['feature'])} +│ {re.escape(first['ir'])} +│", line))
    assert f"{first['argo']['support']}: {first['argo']['mapping']}" in row
    assert f"{first['asl']['support']}: {first['asl']['mapping']}" in row


# -- engines lint --------------------------------------------------------------------------------------------


def _write(path: Path, doc: Any) -> str:
    path.write_text(json.dumps(doc) if path.suffix == ".json" else yaml.safe_dump(doc))
    return str(path)


def test_lint_reads_asl_with_statelint_and_the_rest_as_argo(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    asl = _write(tmp_path / "m.asl.json", {"States": {}})
    listed = _write(tmp_path / "list.yaml", [1, 2])  # not a mapping: linted as an empty Argo document
    clean = str(ROOT / "workflows" / "argo" / "alas-plan.yaml")
    assert main(["engines", "lint", asl, listed, clean]) == 1
    captured = capsys.readouterr()
    assert captured.out == (f'{asl}: State Machine does not have required field "StartAt"\n'
                            f"{listed}: spec: no entrypoint\n")
    assert captured.err == "alas: error: alas engines lint: 2 of 3 files have problems\n"
    assert main(["engines", "lint", "--json", asl, clean]) == 1
    assert json.loads(capsys.readouterr().out) == {"files": [
        {"path": asl, "problems": ['State Machine does not have required field "StartAt"']},
        {"path": clean, "problems": []}], "with_problems": 1}


def test_lint_counts_clean_files(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(ROOT / "workflows" / rel) for rel in sorted(RENDERED)]
    assert main(["engines", "lint", *files]) == 0
    assert capsys.readouterr().out == f"{len(files)} files clean\n"
    assert main(["engines", "lint", "--json", files[0]]) == 0
    assert json.loads(capsys.readouterr().out) == {"files": [{"path": files[0], "problems": []}], "with_problems": 0}


def test_lint_names_an_unreadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "gone.yaml"
    assert main(["engines", "lint", str(missing)]) == 2
    assert capsys.readouterr().err == f"alas: error: {missing}: workflow file not found\n"


# -- render --------------------------------------------------------------------------------------------------


def test_render_writes_the_tree_lists_it_and_checks_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["render", "--out", str(out), "--no-chart", "--image", "reg/alas:9"]) == 0
    assert capsys.readouterr().out.splitlines() == [str(out / rel) for rel in RENDERED]
    files = render_all(load_definitions(), image="reg/alas:9")
    assert {rel: (out / rel).read_text() for rel in files} == files
    assert "reg/alas:9" in (out / "argo" / "alas-plan.yaml").read_text()
    assert main(["render", "--out", str(out), "--no-chart", "--image", "reg/alas:9", "--check"]) == 0
    assert capsys.readouterr().out == f"{len(files)} files up to date\n"
    # With the default image the same tree is stale: --check names every file that differs, and the fix.
    (out / "asl" / "alas-plan.asl.json").unlink()
    assert main(["render", "--out", str(out), "--no-chart", "--check"]) == 1
    err = capsys.readouterr().err
    stale = [rel for rel in files if rel.startswith("argo/") or rel == "asl/alas-plan.asl.json"]  # in render order
    assert err == (f"alas: error: {out}: {len(stale)} rendered files are stale: {', '.join(stale)} "
                   "(run alas render)\n")


def test_render_copies_the_templates_into_the_chart_and_checks_them(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out, chart = tmp_path / "out", tmp_path / "chart" / "workflows"
    chart.parent.mkdir()
    assert main(["render", "--out", str(out), "--chart-dir", str(chart)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed == [str(out / rel) for rel in RENDERED] + [str(chart / name) for name in TEMPLATES]
    assert sorted(p.name for p in chart.iterdir()) == TEMPLATES
    assert (chart / "alas-plan.yaml").read_text() == RENDERED["argo/alas-plan.yaml"]
    assert main(["render", "--out", str(out), "--chart-dir", str(chart), "--check"]) == 0
    capsys.readouterr()
    (chart / "alas-bench.yaml").write_text("stale\n")
    assert main(["render", "--out", str(out), "--chart-dir", str(chart), "--check"]) == 1
    assert capsys.readouterr().err == (f"alas: error: {out}: 1 rendered files are stale: {chart}/alas-bench.yaml "
                                       "(run alas render)\n")
    # --no-chart leaves the chart alone, in both modes.
    assert main(["render", "--out", str(out), "--chart-dir", str(chart), "--no-chart", "--check"]) == 0
    assert main(["render", "--out", str(out), "--chart-dir", str(chart), "--no-chart"]) == 0
    assert (chart / "alas-bench.yaml").read_text() == "stale\n"


def test_render_makes_a_chart_directory_given_by_name_like_out(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # It was skipped without a word when its parent was missing: a user who named it got no templates there.
    out, chart = tmp_path / "out", tmp_path / "new-chart" / "workflows"
    assert main(["render", "--out", str(out), "--chart-dir", str(chart)]) == 0
    assert capsys.readouterr().out.splitlines() == ([str(out / rel) for rel in RENDERED]
                                                    + [str(chart / name) for name in TEMPLATES])
    assert sorted(p.name for p in chart.iterdir()) == TEMPLATES
    assert main(["render", "--out", str(out), "--chart-dir", str(chart), "--check"]) == 0


def test_render_refuses_a_chart_directory_that_cannot_be_looked_up(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    # A parent past the name length limit: Path.is_dir() raised OSError, a traceback; then it was skipped as a
    # missing one; now it is refused like such an --out, before anything is written.
    out, chart = tmp_path / "out", tmp_path / ("x" * 300) / "workflows"
    assert main(["render", "--out", str(out), "--chart-dir", str(chart)]) == 2
    assert capsys.readouterr().err == f"alas: error: {chart}: --chart-dir: File name too long\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_render_defaults_outside_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """As from a wheel: no checkout, so `workflows/` under the current directory, and the chart only where a
    `charts/alas` directory stands beside the (pretended) package root."""
    import alas_argo.engines.rendering as rendering

    root = tmp_path / "root"
    root.mkdir()
    monkeypatch.setattr(rendering, "repo_root", lambda: root)
    monkeypatch.chdir(tmp_path)
    assert main(["render"]) == 0
    assert capsys.readouterr().out.splitlines() == [str(tmp_path / "workflows" / rel) for rel in RENDERED]
    assert not (root / "charts").exists()
    assert main(["render", "--check"]) == 0  # no chart directory: nothing of the chart is compared either
    assert capsys.readouterr().out == f"{len(RENDERED)} files up to date\n"
    (root / "charts" / "alas").mkdir(parents=True)
    assert main(["render", "--check"]) == 1  # the chart beside the root now counts, and it is empty
    assert f"{root}/charts/alas/workflows/alas-bench.yaml" in capsys.readouterr().err
    assert main(["render"]) == 0
    assert sorted(p.name for p in (root / "charts" / "alas" / "workflows").iterdir()) == TEMPLATES


def test_render_refuses_an_out_or_chart_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert main(["render", "--out", str(a_file), "--no-chart"]) == 2
    assert capsys.readouterr().err == f"alas: error: {a_file}: --out: exists and is not a directory\n"
    out = tmp_path / "out"
    assert main(["render", "--out", str(out), "--chart-dir", str(a_file)]) == 2
    assert capsys.readouterr().err == f"alas: error: {a_file}: --chart-dir: exists and is not a directory\n"
    assert not out.exists()  # refused before anything was written
    assert main(["render", "--out", str(a_file), "--no-chart", "--check"]) == 1  # compared, not written: stale


def test_render_that_cannot_write_names_the_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "argo").write_text("a file where a directory must go")
    assert main(["render", "--out", str(out), "--no-chart"]) == 2
    assert capsys.readouterr().err == f"alas: error: {out / 'argo'}: cannot write: File exists\n"


# -- submit's arguments --------------------------------------------------------------------------------------


def _params(text: str) -> dict[str, str]:
    return {p["name"]: p["value"] for p in json.loads(text)["spec"]["arguments"]["parameters"]}


def test_submit_splits_a_parameter_at_its_first_equals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "alas-plan", "-p", "instance=/data/a=b.txt", "-p", "run-id=r1", "--dry-run",
                 "--json"]) == 0
    assert _params(capsys.readouterr().out)["instance"] == "/data/a=b.txt"
    assert main(["submit", "alas-plan", "-p", "run-id", "--dry-run"]) == 2
    assert capsys.readouterr().err == "alas: error: -p: expected NAME=VALUE, got 'run-id'\n"


def test_submit_dry_run_yaml_is_block_style_in_build_order(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["submit", "alas-plan", "-p", "run-id=r5", "--dry-run"]
    assert main([*argv, "--json"]) == 0
    workflow = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    assert capsys.readouterr().out == yaml.safe_dump(workflow, sort_keys=False, default_flow_style=False)


def test_submit_compiles_other_definitions_from_workflows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    defs = tmp_path / "defs"
    defs.mkdir()
    (defs / "__init__.py").write_text(
        "from alas_argo.ir import Node, Workflow\n"
        "WORKFLOWS = {'mine': lambda: Workflow(name='mine', nodes=[Node(id='only', role='validator')])}\n")
    try:
        assert main(["submit", "mine", "--workflows", str(defs), "--dry-run", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["metadata"]["generateName"] == "mine-"
        assert main(["submit", "alas-plan", "--workflows", str(defs), "--dry-run"]) == 2  # only that directory's
        assert "unknown workflow 'alas-plan' (known: mine)" in capsys.readouterr().err
    finally:
        sys.modules.pop("workflows", None)  # the next test loads the shipped definitions again


def test_submit_names_an_unknown_workflow_and_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "alas-nope", "--dry-run"]) == 2
    assert capsys.readouterr().err == ("alas: error: alas submit: unknown workflow 'alas-nope' "
                                       f"(known: {', '.join(sorted(load_definitions()))})\n")


def test_submit_compiles_a_definition_with_the_image_and_namespace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["submit", "alas-repair", "--image", "reg/alas:7", "--namespace", "team", "--dry-run",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["metadata"]["namespace"] == "team" and "reg/alas:7" in json.dumps(doc)


@pytest.mark.parametrize("suffix", [".yaml", ".yml", ".json"])
def test_submit_reads_a_rendered_file_of_each_suffix(tmp_path: Path, suffix: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    doc = yaml.safe_load(RENDERED["argo/alas-plan.yaml"])
    path = tmp_path / f"plan{suffix}"
    path.write_text(json.dumps(doc) if suffix == ".json" else yaml.safe_dump(doc))
    assert main(["submit", str(path), "-p", "run-id=r2", "--dry-run", "--json"]) == 0
    submitted = json.loads(capsys.readouterr().out)
    assert submitted["spec"]["workflowTemplateRef"] == {"name": "alas-plan"}


@pytest.mark.parametrize("metadata", [
    {"name": "renamed", "labels": {"alas-argo.dev/workflow": "alas-plan"}},  # the label names it
    {"name": "alas-plan"},  # a WorkflowTemplate file is named after it
], ids=["label", "name"])
def test_a_rendered_file_is_checked_as_the_workflow_it_is(tmp_path: Path, metadata: dict[str, Any],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    doc = yaml.safe_load(RENDERED["argo/alas-plan.yaml"])
    doc["metadata"] = metadata
    path = tmp_path / "wf.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert main(["submit", str(path), "-p", "instance=nope99", "--dry-run"]) == 2
    assert "unknown instance 'nope99'" in capsys.readouterr().err
    doc["metadata"] = {"name": "someone-elses"}  # not a shipped workflow: its parameters pass unchecked
    path.write_text(yaml.safe_dump(doc))
    assert main(["submit", str(path), "-p", "instance=nope99", "-p", "run-id=r3", "--dry-run", "--json"]) == 0
    assert _params(capsys.readouterr().out)["instance"] == "nope99"


def test_submit_hands_the_workflow_and_settings_to_the_server(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import alas_argo.engines.submitting as submitting

    sent: list[tuple[dict[str, Any], Any]] = []

    def submit(workflow: dict[str, Any], settings: Any) -> str:
        sent.append((workflow, settings))
        return "alas-repair-x7"

    monkeypatch.setattr(submitting, "submit", submit)
    assert main(["submit", "alas-repair", "--host", "https://argo.example:2746", "--token", "t0k",
                 "--namespace", "team", "-k", "-p", "run-id=r4"]) == 0
    assert capsys.readouterr().out == "submitted alas-repair-x7 in namespace team\n"
    ((workflow, settings),) = sent
    assert workflow["metadata"]["namespace"] == "team" and _params(json.dumps(workflow))["run-id"] == "r4"
    assert settings.namespace == "team" and settings.verify_ssl is False
    assert "argo.example:2746" in str(settings.host) and settings.token.get_secret_value() == "t0k"
    assert main(["submit", "alas-repair", "--host", "https://argo.example:2746", "--namespace", "team"]) == 0
    assert sent[-1][1].verify_ssl is not False  # without -k the settings' default stands


@pytest.mark.parametrize(("text", "needle"), [
    ("- 1\n- 2\n", "a workflow document must be a mapping"),
    ("", "a workflow document must be a mapping"),  # an empty file is YAML's null
    ("kind: WorkflowTemplate\nmetadata: {name: x, labels: [a]}\nspec: {}\n",
     "metadata.labels must be a mapping, not list"),
    ("kind: Workflow\nspec: {arguments: {parameters: [{value: '1'}]}}\n",
     "spec.arguments.parameters[0].name must be a non-empty string"),
    ("kind: Workflow\nspec: [1]\n", "spec must be a mapping, not list"),
], ids=["list", "empty", "labels-list", "nameless-parameter", "spec-list"])
def test_submit_refuses_a_file_of_the_wrong_shape_in_one_line(tmp_path: Path, text: str, needle: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """These were an AttributeError and a traceback (exit 1, as if a check had failed), not a refusal (exit 2)."""
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    assert main(["submit", str(path), "--dry-run"]) == 2
    assert capsys.readouterr().err == f"alas: error: {path}: {needle}\n"
