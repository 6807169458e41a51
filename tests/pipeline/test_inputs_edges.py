"""A run's recorded inputs, read directly (tests/pipeline/test_resume.py drives them through whole runs): the
instance is recorded by the digest of its contents, not only its name, and a refused resume shows each
differing document by the first 12 hex digits of its own SHA-256 and says what to do instead."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import FirstEdit
from alas_argo.log import EventType, canonical_json
from alas_argo.pipeline import RunConfig
from alas_argo.pipeline.inputs import check_same_inputs, recorded_inputs, run_inputs
from tests.pipeline.pipeline_helpers import FT06, TWO_BREAKDOWNS, open_log


def short(doc: Any) -> str:
    """The 12 hex digits a refusal shows of a document: computed here, not by the module's own helper."""
    return hashlib.sha256(canonical_json(doc)).hexdigest()[:12]


def edited_ft06() -> Instance:
    """ft06 under its own name with one duration longer: another instance the name alone cannot tell apart."""
    doc = FT06.to_json()
    jobs = [[list(op) for op in job] for job in doc["jobs"]]
    jobs[0][0][1] += 1
    return Instance.model_validate({**doc, "jobs": jobs})


def test_the_instance_is_recorded_by_its_contents() -> None:
    recorded = run_inputs(TWO_BREAKDOWNS, FT06, [])["inputs"]["instance"]
    digest = "sha256:" + hashlib.sha256(canonical_json(FT06.to_json())).hexdigest()
    assert recorded == {"name": "ft06", "digest": digest}
    edited = run_inputs(TWO_BREAKDOWNS, edited_ft06(), [])
    assert edited["inputs"]["instance"]["name"] == "ft06"
    assert edited["inputs"]["instance"]["digest"] != recorded["digest"]
    assert edited["digest"] != run_inputs(TWO_BREAKDOWNS, FT06, [])["digest"]


def test_an_edited_instance_under_the_same_name_is_refused_showing_both_digests(tmp_path: Path) -> None:
    log = open_log(tmp_path, "r1")
    log.append(EventType.RUN_INPUTS, payload=run_inputs(TWO_BREAKDOWNS, FT06, []))
    check_same_inputs(log, run_inputs(TWO_BREAKDOWNS, FT06, []))  # the same inputs: continued
    edited = edited_ft06()
    with pytest.raises(InputError) as refused:
        check_same_inputs(log, run_inputs(TWO_BREAKDOWNS, edited, []))
    assert str(refused.value) == (
        f"run r1 was started with other inputs: instance ft06 ({short(FT06.to_json())}) "
        f"(now ft06 ({short(edited.to_json())})); resume it with the same ones, or start a new run with "
        "another --run-id")


def test_an_edited_disruption_file_is_shown_by_the_digest_of_its_documents(tmp_path: Path) -> None:
    first = [Disruption.model_validate({"time": 100, "events": [
        {"kind": "machine_breakdown", "machine": 1, "start": 100, "duration": 60}]})]
    edited = [Disruption.model_validate({"time": 101, "events": [
        {"kind": "machine_breakdown", "machine": 1, "start": 101, "duration": 60}]})]
    config = RunConfig(instance="ft06", planner="heuristic", disrupt="d.json", repair_budget=1)
    log = open_log(tmp_path, "r2")
    log.append(EventType.RUN_INPUTS, payload=run_inputs(config, FT06, first))
    assert recorded_inputs(log) == run_inputs(config, FT06, first)
    # Another path with the same documents is the same input.
    check_same_inputs(log, run_inputs(config.model_copy(update={"disrupt": "copy.json"}), FT06, first))
    with pytest.raises(InputError) as refused:
        check_same_inputs(log, run_inputs(config, FT06, edited))
    before, now = [d.to_json() for d in first], [d.to_json() for d in edited]
    assert short(before) != short(now)
    assert str(refused.value) == (
        f"run r2 was started with other inputs: disrupt a disruption file ({short(before)}) "
        f"(now a disruption file ({short(now)})); resume it with the same ones, or start a new run with "
        "another --run-id")


def test_a_run_recorded_before_the_first_edit_resumes_only_with_the_redispatch(tmp_path: Path) -> None:
    """Runs recorded before the first edit was a run's input ran the re-dispatch: their inputs lack the field, and
    so do the inputs of a run with the re-dispatch, whatever the library's default; the tabu search is another
    run, named as such (the missing field shown at the value it stands for)."""
    redispatch = TWO_BREAKDOWNS.model_copy(update={"repair_first_edit": FirstEdit.REDISPATCH})
    tabu = TWO_BREAKDOWNS.model_copy(update={"repair_first_edit": FirstEdit.TABU})
    assert "repair_first_edit" not in run_inputs(redispatch, FT06, [])["inputs"]
    assert run_inputs(tabu, FT06, [])["inputs"]["repair_first_edit"] == "tabu"
    log = open_log(tmp_path, "r3")
    log.append(EventType.RUN_INPUTS, payload=run_inputs(redispatch, FT06, []))
    check_same_inputs(log, run_inputs(redispatch, FT06, []))
    with pytest.raises(InputError, match=r"inputs: repair_first_edit redispatch \(now tabu\); resume"):
        check_same_inputs(log, run_inputs(tabu, FT06, []))
