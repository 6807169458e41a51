"""`alas step`'s own code (alas_argo/cli/stepping.py): how each flag becomes the StepInput a step runs with (the
defaults, the lists split and deduplicated, the JSON flags, NAME=VALUE pairs), the one-line refusals naming the
flag, and the metrics hand-on that never changes how a step ends.

Mutation testing (bench/README.md, fourteenth session) found these read by no test: the step tests run whole
roles and look at their outputs, so a flag read wrongly on its way to the StepInput went unseen.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

import alas_argo.metrics_outbox
import alas_argo.steps
from alas_argo.cli import main
from alas_argo.errors import StoreError, TransientError
from alas_argo.log import Store
from alas_argo.step_context import StepInput, StepOutput, output_key


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[StepInput]:
    """The StepInputs `alas step` hands `run_step` (which answers with one output parameter and runs nothing)."""
    got: list[StepInput] = []

    def run_step(inp: StepInput, store: Store) -> StepOutput:
        got.append(inp)
        return StepOutput(doc={}, params={"key": "k"})

    monkeypatch.setattr(alas_argo.steps, "run_step", run_step)
    return got


def _step(tmp_path: Path, *args: str) -> int:
    return main(["step", *args, "--store", "fs", "--root", str(tmp_path / "log"), "--outputs",
                 str(tmp_path / "out")])


def test_the_defaults_the_step_runs_with(tmp_path: Path, seen: list[StepInput]) -> None:
    assert _step(tmp_path, "blueprint", "--run-id", "r1") == 0
    assert (tmp_path / "out" / "key").read_text() == "k"  # the output parameters are written
    # The node is the kind, the scope the run id; no bound loops once; every list and map empty.
    assert seen[0] == StepInput(kind="blueprint", node="blueprint", run_id="r1", scope="r1")
    assert seen[0].max_iters == 1 and seen[0].item is None and seen[0].params == {}


def test_every_flag_reaches_the_step_input(tmp_path: Path, seen: list[StepInput]) -> None:
    repair = {"patch": "fix", "replan": "plan"}
    contract = {"type": "object"}
    until = {"path": "output.done", "op": "eq", "value": True}
    assert _step(tmp_path, "job-agent", "--run-id", "r1", "--scope", "wf-1", "--node", "agents",
                 "--params", '{"a": 1}', "--run-input", "instance=ft06", "--run-input", "expr=a=b",
                 "--input", "blueprint=output/wf-1/blueprint", "--input", 'plans=["k1","k2"]', "--input", "n=42",
                 "--recorded", "fix_it", "--mapped", "agents=blueprint.jobs",
                 "--maybe", "gate", "--maybe", "late", "--maybe", "gate",
                 "--export", "jobs", "--export", "jobs", "--export", "n",
                 "--candidates", "a,,b", "--item", '{"job": 2}', "--loop-until", json.dumps(until),
                 "--max-iters", "3", "--loop-deadline", "600s", "--choices", '{"default": "x"}',
                 "--branches", "p,q,", "--compensations", '{"commit": "retract"}', "--status", "Failed",
                 "--compensates", ",commit,disrupt", "--idempotency-key", "ik", "--output-contract",
                 json.dumps(contract), "--repair", json.dumps(repair), "--rung", "patch") == 0
    inp = seen[0]
    assert (inp.kind, inp.node, inp.run_id, inp.scope) == ("job-agent", "agents", "r1", "wf-1")
    assert inp.params == {"a": 1}
    assert inp.run_inputs == {"instance": "ft06", "expr": "a=b"}  # split at the first "=" only
    # A list of keys (JSON text) is read as a list, any other key is text (even one that parses as JSON); a
    # recorded dependency's key is derived under the scope.
    assert inp.inputs == {"blueprint": "output/wf-1/blueprint", "plans": ["k1", "k2"], "n": "42",
                          "fix_it": output_key("wf-1", "fix_it")}
    assert inp.mapped == {"agents": "blueprint.jobs"}
    assert inp.maybe == ["gate", "late"] and inp.exports == ["jobs", "n"]  # repeats dropped, order kept
    assert inp.candidates == ["a", "b"] and inp.branches == ["p", "q"] and inp.compensates == ["commit", "disrupt"]
    assert inp.item == {"job": 2} and inp.loop_until == until
    assert inp.max_iters == 3 and inp.loop_deadline == 600.0
    assert inp.choices == {"default": "x"} and inp.compensations == {"commit": "retract"}
    assert (inp.status, inp.idempotency_key, inp.rung) == ("Failed", "ik", "patch")
    assert inp.output_contract == contract and inp.repair == repair


def test_a_text_item_and_empty_json_flags_take_their_defaults(tmp_path: Path, seen: list[StepInput]) -> None:
    # Argo substitutes a string item bare; an empty JSON flag (an unset template parameter) is its default.
    assert _step(tmp_path, "job-agent", "--run-id", "r1", "--item", "ta01", "--params", "", "--compensations", "",
                 "--loop-until", "", "--choices", "", "--output-contract", "", "--repair", "",
                 "--input", "a=plain") == 0
    inp = seen[0]
    assert inp.item == "ta01" and inp.params == {} and inp.compensations == {} and inp.inputs == {"a": "plain"}
    assert inp.loop_until is None and inp.choices is None and inp.output_contract is None and inp.repair is None


@pytest.mark.parametrize("flag", ["params", "loop-until", "choices", "compensations", "output-contract", "repair"])
def test_a_json_flag_that_is_not_json_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            seen: list[StepInput], flag: str) -> None:
    assert _step(tmp_path, "blueprint", "--run-id", "r1", f"--{flag}", "{oops") == 2
    err = capsys.readouterr().err.strip()
    assert err == f"alas: error: --{flag}: {flag} is not JSON: Expecting property name enclosed in double quotes"
    assert not seen


@pytest.mark.parametrize(("flag", "value"), [("run-input", "novalue"), ("run-input", "=x"), ("input", "k"),
                                             ("mapped", "=blueprint.jobs")])
def test_a_pair_without_a_name_or_an_equals_sign_is_one_line_naming_its_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], seen: list[StepInput], flag: str, value: str) -> None:
    assert _step(tmp_path, "blueprint", "--run-id", "r1", f"--{flag}", value) == 2
    assert capsys.readouterr().err.strip() == f"alas: error: --{flag}: expected NAME=VALUE, got {value!r}"
    assert not seen


def test_a_field_refused_by_the_step_input_is_named_by_its_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 seen: list[StepInput]) -> None:
    # The field's name with dashes is the flag (loop_until: --loop-until), not the field or its first word.
    assert _step(tmp_path, "blueprint", "--run-id", "r1", "--loop-until", '{"path": "output.x", "op": "??"}') == 2
    assert capsys.readouterr().err.startswith("alas: error: --loop-until: ")
    assert _step(tmp_path, "blueprint", "--run-id", "r1", "--output-contract", '{"type": 3}') == 2
    assert capsys.readouterr().err.startswith("alas: error: --output-contract: ")
    assert not seen


def test_metrics_that_cannot_be_handed_on_are_said_and_never_change_the_exit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        seen: list[StepInput]) -> None:
    sources: list[str] = []

    def write_report(store: Store, *, source: str) -> str | None:
        sources.append(source)
        raise StoreError("the store said no")

    monkeypatch.setattr(alas_argo.metrics_outbox, "write_report", write_report)
    assert _step(tmp_path, "job-agent", "--run-id", "r1") == 0
    assert sources == ["step job-agent"]
    assert "alas step: metrics not handed on: the store said no\n" in capsys.readouterr().err

    def failing_step(inp: StepInput, store: Store) -> StepOutput:
        raise TransientError("the role failed")

    # Handed on after a failed step too (finally), and the step's own error decides the exit.
    monkeypatch.setattr(alas_argo.steps, "run_step", failing_step)
    assert _step(tmp_path, "commit", "--run-id", "r1") == 75
    assert sources == ["step job-agent", "step commit"]
    err = capsys.readouterr().err
    assert "the role failed" in err and "metrics not handed on" in err


def test_a_step_hands_on_what_it_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         seen: list[StepInput]) -> None:
    stores: list[Any] = []

    def write_report(store: Store, *, source: str) -> str | None:
        stores.append((type(store).__name__, source))
        return None

    monkeypatch.setattr(alas_argo.metrics_outbox, "write_report", write_report)
    assert _step(tmp_path, "supervisor", "--run-id", "r1") == 0
    assert stores == [("FsStore", "step supervisor")]


def test_the_store_flag_chooses_the_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            seen: list[StepInput]) -> None:
    # Nothing is sent: the S3 client is only built (run_step and the metrics hand-on are stand-ins).
    for name, value in {"ALAS_STORE__S3_ENDPOINT": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "k",
                        "AWS_SECRET_ACCESS_KEY": "s", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("ALAS_STORE__KIND", raising=False)
    stores: list[str] = []

    def write_report(store: Store, *, source: str) -> str | None:
        stores.append(type(store).__name__)
        return None

    monkeypatch.setattr(alas_argo.metrics_outbox, "write_report", write_report)
    assert main(["step", "supervisor", "--run-id", "r1", "--store", "s3", "--outputs", str(tmp_path / "o")]) == 0
    assert stores == ["S3Store"]


@pytest.mark.parametrize(("code", "exit_code", "said"), [
    (errno.ENOSPC, 75, "No space left on device (free space there, then run it again)"),
    (errno.EROFS, 2, "Read-only file system")])
def test_output_parameters_that_cannot_be_written_are_one_line_and_a_full_disk_is_retried(
        tmp_path: Path, seen: list[StepInput], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        code: int, exit_code: int, said: str) -> None:
    # It was an OSError traceback (exit 1): on a pod whose disk filled up, a failure Argo did not retry.
    def refused(directory: object, out: StepOutput) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(alas_argo.steps, "write_outputs", refused)
    assert _step(tmp_path, "blueprint", "--run-id", "r1") == exit_code
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"alas: error: {tmp_path / 'out'}: cannot write the step's output parameters: {said}")
    assert len(seen) == 1  # the step ran: its work is in the log, and a retry records nothing twice
