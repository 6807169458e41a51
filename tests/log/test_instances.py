"""The instance a run's log names (alas_argo.log.instances.named_instance): what the controller and the cluster's
repair steps read for a run they did not start."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.errors import InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.instance import Instance
from alas_argo.log import EventType, ExecutionLog, FsStore
from alas_argo.log.instances import named_instance

FT06, LA01 = get_instance("ft06"), get_instance("la01")
CUSTOM = Instance(name="custom", jobs=[[(0, 2), (1, 3)], [(1, 1), (0, 4)]])


def _log(tmp_path: Path) -> ExecutionLog:
    return ExecutionLog(FsStore(tmp_path), "r1")


def test_a_full_document_wins_over_a_name_and_is_read_as_recorded(tmp_path: Path) -> None:
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, payload={"instance": {"name": "ft06"}})
    log.append(EventType.VALIDATION_PASSED, payload={"instance": CUSTOM.to_json()})
    assert named_instance(log, fallback="la01") == CUSTOM


def test_the_first_name_in_event_order_is_the_bundled_instance(tmp_path: Path) -> None:
    log = _log(tmp_path)
    log.append(EventType.VALIDATION_FAILED, payload={"instance": {"name": "la01"}})
    log.append(EventType.REPAIR_FINISHED, payload={"instance": {"name": "ft06"}})
    # run.started, then validation.passed, validation.failed, repair.finished: the types' order, not the log's.
    assert named_instance(log) == LA01


def test_the_fallback_is_used_only_when_no_event_names_one(tmp_path: Path) -> None:
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, payload={"workflow": "alas-plan"})
    log.append(EventType.NODE_STARTED, payload={"instance": CUSTOM.to_json()})  # not a type that names it
    assert named_instance(log, fallback="ft06") == FT06
    with pytest.raises(InputError) as refused:
        named_instance(log)
    assert (refused.value.message, refused.value.where) == ("the run records no instance (no event names one)",
                                                            "run r1")


def test_a_name_that_is_no_bundled_instance_is_an_input_error(tmp_path: Path) -> None:
    log = _log(tmp_path)
    log.append(EventType.RUN_STARTED, payload={"instance": {"name": "no-such-instance"}})
    with pytest.raises(InputError):
        named_instance(log)
