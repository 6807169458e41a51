"""What a run was asked to do, recorded when it starts, so that a run id can only be resumed with the same.

A run's inputs are its configuration (planner, seed, limits, repair method, ...) with the instance and any
disruption file replaced by their contents: the name and a SHA-256 of the instance document, and the
disruption documents themselves, so that a renamed file with the same content resumes and an edited one is
refused. The first start of a run appends them as a ``run.inputs`` event with a canonical hash; every later
start with that run id compares and refuses a difference with one line naming each field that differs.
"""

from __future__ import annotations

import hashlib
from typing import Any

from alas_argo.errors import InputError
from alas_argo.jssp.disruption import Disruption, DisruptionKind
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair.tabu import FirstEdit
from alas_argo.log import EventType, ExecutionLog, canonical_json
from alas_argo.pipeline.config import RunConfig

__all__ = ["check_same_inputs", "input_digest", "recorded_inputs", "run_inputs"]


#: Fields added after runs were first recorded, with the value every run recorded before them ran with (for
#: the first edit that is the re-dispatch, not the library's default of today: a run recorded without the field
#: ran the re-dispatch, and resuming it with the tabu search would be another run).
_LATER_FIELDS: dict[str, Any] = {"optimizer": "auto", "feedback_rounds": 5, "repair_tolerance": 0.0,
                                 "repair_first_edit": FirstEdit.REDISPATCH.value}


def input_digest(doc: Any) -> str:
    """The canonical SHA-256 of a JSON document (sorted keys, no whitespace)."""
    return "sha256:" + hashlib.sha256(canonical_json(doc)).hexdigest()


def run_inputs(config: RunConfig, instance: Instance, disruptions: list[Disruption]) -> dict[str, Any]:
    """The inputs of a run as one JSON document, its ``digest`` included.

    Args:
        config: The run's configuration.
        instance: The instance it plans (read from ``config.instance``).
        disruptions: The disruptions read from a file (empty when generated or absent).
    """
    fields = config.model_dump(mode="json")
    for name, earlier in _LATER_FIELDS.items():  # at their earlier values they are left out: older runs resume
        if fields.get(name) == earlier:
            fields.pop(name, None)
    fields["instance"] = {"name": instance.name, "digest": input_digest(instance.to_json())}
    if config.disrupt is not None and config.disrupt not in {k.value for k in DisruptionKind}:
        fields["disrupt"] = {"file": [d.to_json() for d in disruptions]}
    return {"inputs": fields, "digest": input_digest(fields)}


def recorded_inputs(log: ExecutionLog) -> dict[str, Any] | None:
    """The inputs the run recorded when it first started, or None (a new run, or one older than the record)."""
    for event in log.events():
        if event.type is EventType.RUN_INPUTS:
            return event.payload
    return None


def _show(value: Any) -> str:
    if isinstance(value, dict) and "name" in value and "digest" in value:
        return f"{value['name']} ({value['digest'][7:19]})"
    if isinstance(value, dict) and "file" in value:
        return f"a disruption file ({input_digest(value['file'])[7:19]})"
    return "none" if value is None else str(value)


def check_same_inputs(log: ExecutionLog, inputs: dict[str, Any]) -> None:
    """Refuse to continue ``log`` with other inputs than the ones it recorded.

    Raises:
        InputError: The recorded inputs differ; the message names every field that differs, with the
            recorded value and the new one (exit code 2).
    """
    recorded = recorded_inputs(log)
    if recorded is None or recorded.get("digest") == inputs["digest"]:
        return
    before, now = recorded.get("inputs") or {}, inputs["inputs"]
    # A later field left out is shown at the value it was left out at ("redispatch", not "none").
    differ = [f"{name} {_show(before.get(name, _LATER_FIELDS.get(name)))} "
              f"(now {_show(now.get(name, _LATER_FIELDS.get(name)))})"
              for name in sorted(before.keys() | now.keys()) if before.get(name) != now.get(name)]
    raise InputError(f"run {log.run_id} was started with other inputs: {'; '.join(differ)}; resume it with the "
                     "same ones, or start a new run with another --run-id")
