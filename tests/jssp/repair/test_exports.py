"""The public API of the repair package is pinned."""

from __future__ import annotations

import alas_argo.jssp.repair as repair_pkg


def test_exported_names() -> None:
    assert sorted(repair_pkg.__all__) == sorted([
        "DEFAULT_FIRST_EDIT", "MAX_EFFORT", "MAX_STREAMS", "MAX_TOLERANCE", "FirstEdit", "RepairMethod",
        "RepairOutcome", "RepairResult", "Repairer", "check_effort",
        "check_plan_in_force", "check_tolerance", "get_repairer", "lower_bound", "repair"])
    for name in repair_pkg.__all__:
        assert hasattr(repair_pkg, name)
