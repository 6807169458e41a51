"""`alas run`'s own code (alas_argo/cli/running.py), edge by edge: the line a stopped run leaves, the progress
lines and the live view a listener draws, the summary's own fields, the notes for a finished run and an output
directory, the default run id, the LLM flags' refusals and the usage the summary adds up.

Mutation testing (bench/README.md, fourteenth session) found these read by no test: the CLI's other tests run
whole pipelines and look at the exit code and a few summary fields.
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path
from typing import Any, cast

import pytest
from rich.console import Console

from alas_argo.cli import main
from alas_argo.cli.progress import ProgressLines
from alas_argo.cli.running import _LiveView, _node_lines, interrupted_line
from alas_argo.interrupts import Interrupted
from alas_argo.log import EventType, ExecutionLog, open_store
from alas_argo.runtime import NodeState, StateChange
from alas_argo.settings import load_settings


class _Log:
    """What `interrupted_line` reads of a log: its run id and committed versions."""

    def __init__(self, versions: list[int]) -> None:
        self.run_id = "r7"
        self._versions = versions

    def versions(self) -> list[int]:
        return self._versions


def _line(versions: list[int], where: str | None, signum: int = signal.SIGTERM) -> str:
    return interrupted_line(cast(ExecutionLog, _Log(versions)), Interrupted(signum, where))


def test_a_stopped_run_says_where_it_stopped_what_it_kept_and_how_to_resume() -> None:
    assert _line([1, 2], "optimizer") == ("run r7 interrupted by SIGTERM during optimizer; 2 plan versions "
                                          "committed (current v2); resume it with the same command and --run-id r7")
    # One version is singular; none has no "current"; a stop between nodes names no place.
    assert _line([1], None, signal.SIGINT) == ("run r7 interrupted by SIGINT; 1 plan version committed (current v1); "
                                               "resume it with the same command and --run-id r7")
    assert _line([], "plan") == ("run r7 interrupted by SIGTERM during plan; 0 plan versions committed; resume it "
                                 "with the same command and --run-id r7")


class _Lines:
    """A ProgressLines stand-in that records what the listener asks of it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def working_on(self, label: str) -> None:
        self.calls.append(("working_on", label))

    def say(self, text: str) -> None:
        self.calls.append(("say", text))

    def done(self, label: str) -> None:
        self.calls.append(("done", label))


def _change(node: str, new: str, attempt: int = 1) -> StateChange:
    return StateChange(node_id=node, old=NodeState.READY, new=NodeState(new), attempt=attempt, time=0.0)


def test_the_progress_listener_names_running_nodes_failures_and_finished_nodes() -> None:
    lines = _Lines()
    listen = _node_lines(cast(ProgressLines, lines))
    for change in [_change("plan", "running"), _change("check", "running"), _change("check", "failed_retryable", 2),
                   _change("plan", "executed"), _change("skip_me", "skipped"), _change("x", "cancelled", 3),
                   _change("check", "running"), _change("check", "failed", 4), _change("y", "ready")]:
        listen(change)
    assert lines.calls == [
        ("working_on", "plan"), ("working_on", "plan, check"),
        ("working_on", "plan"), ("say", "check failed retryable (attempt 2)"),
        ("working_on", "-"), ("done", "plan executed"),
        ("working_on", "-"), ("done", "skip_me skipped"),
        ("working_on", "-"), ("say", "x cancelled (attempt 3)"),
        ("working_on", "check"),
        ("working_on", "-"), ("say", "check failed (attempt 4)"),
        ("working_on", "-"),  # a node becoming ready is no line
    ]


class _Live:
    def __init__(self) -> None:
        self.tables: list[Any] = []

    def update(self, table: Any) -> None:
        self.tables.append(table)


def test_the_live_view_draws_each_nodes_last_state_and_attempt() -> None:
    view = _LiveView(Console(), "alas run r1")
    view.update(_change("plan", "running", 0))  # no live display yet: only remembered
    live = _Live()
    view.live = live  # type: ignore[assignment]
    view.update(_change("plan", "executed", 1))
    view.update(_change("check", "failed_retryable", 2))
    assert len(live.tables) == 2
    table = view.render()
    assert re.fullmatch(r"alas run r1  \(\s*\d+\.\d s\)", str(table.title))
    assert [c.header for c in table.columns] == ["node", "state", "attempt"]
    assert table.columns[2].justify == "right"
    assert [list(c.cells) for c in table.columns] == [
        ["plan", "check"], ["[green]executed[/]", "[magenta]failed_retryable[/]"], ["1", "2"]]
    fresh = _LiveView(Console(), "t")
    fresh.update(_change("n", "running", 0))  # attempt 0: an empty cell, not "0"
    assert [list(c.cells) for c in fresh.render().columns] == [["n"], ["[yellow]running[/]"], [""]]


def _run(tmp_path: Path, *extra: str) -> list[str]:
    return ["run", "ft06", "--planner", "heuristic", "--time-limit", "1", "--repair-budget", "1",
            "--root", str(tmp_path / "store"), *extra]


def test_the_summary_adds_its_own_fields_and_a_finished_run_is_said_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _run(tmp_path, "--disrupt", "breakdown", "--run-id", "s1")
    assert main([*argv, "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["resumed"] is False and "out" not in first and "llm" not in first
    assert first["repair_totals"]["repairs"] == 1 and first["moved_since_first"] == first["moved_operations"]
    # "seconds" is the whole command; the pipeline's own figure is kept beside it.
    assert 0 < first["pipeline_seconds"] <= first["seconds"]
    # The finished run again, as people see it: the stored result, said on stderr; the table on stdout.
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "note: run s1 had finished: its stored result (nothing ran again)" in err
    assert "s1" in out and "written to" not in out
    # --quiet: neither the table nor the note.
    assert main([*argv, "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")


def test_an_output_directory_is_named_in_the_summary_and_the_last_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_dir = tmp_path / "out"
    assert main(_run(tmp_path, "--out", str(out_dir), "--run-id", "o1")) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        f"plans, disruptions, report, gantt.png and gantt.html written to {out_dir}")
    report = json.loads((out_dir / "report.json").read_text())
    assert report["out"] == str(out_dir)
    assert main(_run(tmp_path, "--out", str(tmp_path / "o2"), "--run-id", "o2", "--json")) == 0
    assert json.loads(capsys.readouterr().out)["out"] == str(tmp_path / "o2")


def test_the_default_run_id_is_the_instance_the_time_and_a_random_tail(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run(tmp_path, "--json")) == 0
    run_id = json.loads(capsys.readouterr().out)["run_id"]
    assert re.fullmatch(r"ft06-\d{8}-\d{6}-[0-9a-f]{4}", run_id), run_id
    assert (tmp_path / "store").exists()


def test_replaying_llm_answers_of_a_run_that_does_not_exist_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run(tmp_path, "--planner", "simulated", "--llm-replay", "ghost", "--run-id", "g1")) == 2
    assert "no run 'ghost' to replay LLM answers from" in capsys.readouterr().err


def test_the_simulated_planners_usage_is_summed_into_the_summary(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "ft06", "--planner", "simulated", "--time-limit", "1", "--root", str(tmp_path / "store"),
            "--json", "--run-id", "u1"]
    assert main(argv) == 0
    usage = json.loads(capsys.readouterr().out)["llm"]
    # The summary's totals are the sums over the exchanges the run recorded, one report per exchange.
    log = ExecutionLog(open_store(load_settings(store={"kind": "fs", "root": tmp_path / "store"})), "u1")
    exchanges = [e.payload for e in log.events() if e.type == EventType.LLM_EXCHANGE]
    assert len(exchanges) >= 6 and usage["exchanges"] == len(exchanges)
    assert usage["calls"] == sum(x["calls"] for x in exchanges)
    assert usage["prompt_tokens"] == sum(x["prompt_tokens"] for x in exchanges) > 0
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def _recorded_inputs(root: Path, run_id: str) -> dict[str, Any]:
    log = ExecutionLog(open_store(load_settings(store={"kind": "fs", "root": root})), run_id)
    inputs = next(e.payload["inputs"] for e in log.events() if e.type == EventType.RUN_INPUTS)
    return {k: v for k, v in inputs.items() if k != "instance"}


def test_the_flags_defaults_and_values_are_the_inputs_the_run_records(tmp_path: Path) -> None:
    root = tmp_path / "store"
    assert main(["run", "ft06", "--planner", "heuristic", "--time-limit", "1", "--root", str(root), "--quiet",
                 "--run-id", "d1"]) == 0
    # The later fields (optimizer, feedback rounds, tolerance) are left out at their defaults; the first edit is
    # left out at the re-dispatch, what runs recorded without it ran, so the default (tabu) is recorded.
    assert _recorded_inputs(root, "d1") == {
        "agent_timeout": 60.0, "deterministic": True, "disrupt": None, "disruptions": 1, "faults": 0,
        "max_revalidations": 3, "planner": "heuristic", "repair_budget": 5.0, "repair_effort": 1.0,
        "repair_first_edit": "tabu", "repair_method": "lcrp", "seed": 0, "time_limit": 1.0, "variant": "full",
        "workers": 2}
    assert main(["run", "ft06", "--planner", "heuristic", "--time-limit", "1", "--root", str(root), "--quiet",
                 "--run-id", "d2", "--disrupt", "shock", "--disruptions", "2", "--seed", "3", "--repair-method",
                 "aor", "--repair-budget", "2", "--repair-effort", "2", "--repair-tolerance", "0.01", "--workers",
                 "1", "--wall-clock", "--variant", "no_repair", "--optimizer", "none", "--feedback-rounds", "2"]) == 0
    assert _recorded_inputs(root, "d2") == {
        "agent_timeout": 60.0, "deterministic": False, "disrupt": "shock", "disruptions": 2, "faults": 0,
        "max_revalidations": 3, "planner": "heuristic", "repair_budget": 2.0, "repair_effort": 2.0,
        "repair_method": "aor", "seed": 3, "time_limit": 1.0, "variant": "no_repair", "workers": 1,
        "optimizer": "none", "feedback_rounds": 2, "repair_tolerance": 0.01, "repair_first_edit": "tabu"}


def test_an_unknown_planner_is_refused_by_the_parser_listing_the_choices(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["run", "ft06", "--planner", "oracle", "--root", str(tmp_path)])
    assert stop.value.code == 2
    assert "argument --planner: invalid choice: 'oracle' (choose from " in capsys.readouterr().err


def test_a_failed_run_names_each_nodes_error_and_resumes_with_a_manual_plan(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "store"
    argv = ["run", "ft06", "--planner", "heuristic", "--faults", "2", "--variant", "no_repair", "--root", str(root),
            "--run-id", "f1"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert re.search(r"^  check_optimized: LoopGuardTripped: loop stopped by its guard", err, re.M), err
    # Handed over under the store's directory (no --out); the heuristic planner's run resumes from the edit.
    best = root / "handoff" / "f1" / "best_plan.json"
    assert f"-> {best}" in err
    assert main([*argv, "--manual-plan", str(best), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["resumed"] is True and summary["final_valid"] is True


def test_the_llm_planner_without_an_endpoint_says_every_way_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "ALAS_LLM__BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    assert main(["run", "ft06", "--planner", "llm", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        "alas: error: --planner llm needs an endpoint: pass --llm-base-url or set OPENAI_BASE_URL (or replay a run "
        "with --llm-replay RUN); --llm-fallback plans with the heuristic agents instead")


def test_disruptions_without_a_kind_is_one_line_listing_the_kinds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "ft06", "--disruptions", "2", "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        "alas: error: --disruptions counts generated disruptions: give it with --disrupt breakdown|shock|mixed")


def test_on_a_terminal_the_live_view_shows_every_nodes_state_and_says_resumed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # rich: stderr is a terminal
    monkeypatch.setenv("COLUMNS", "120")
    argv = ["run", "ft06", "--planner", "simulated", "--time-limit", "1", "--root", str(tmp_path / "store"),
            "--run-id", "L1"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    err = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", err)
    assert re.search(r"alas run L1  \(\s*\d+\.\d s\)", err), err
    rows = {m[1]: (m[2], m[3]) for m in re.finditer(r"│ (\w+)\s+│ (\w+)\s+│\s+(\d*) │", err)}
    assert rows["commit_v1"] == ("executed", "1") and rows["disrupt_1"] == ("skipped", "")
    assert "llm calls / tokens" in out  # the agents' usage reached the summary
    assert main(argv) == 0
    assert "alas run L1 (resumed)  (" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["inf", "nan"])
def test_an_endless_time_limit_is_refused_naming_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         value: str) -> None:
    # RunConfig alone would take "inf" (a float > 0): the flag's own type refuses it before a run id exists.
    with pytest.raises(SystemExit) as stop:
        main(["run", "ft06", "--time-limit", value, "--root", str(tmp_path)])
    assert stop.value.code == 2
    assert "argument --time-limit: " in capsys.readouterr().err and not any(tmp_path.iterdir())
