"""The workflows users submit, as IR builders; ``alas render`` compiles them to Argo YAML and ASL JSON."""

from __future__ import annotations

from collections.abc import Callable

from alas_argo.ir import Workflow

__all__ = ["WORKFLOWS"]


def _builders() -> dict[str, Callable[[], Workflow]]:
    from workflows import bench, plan_and_repair, repair_on_disruption

    return {"alas-plan": plan_and_repair.build, "alas-bench": bench.build, "alas-repair": repair_on_disruption.build}


#: Template name -> IR builder.
WORKFLOWS: dict[str, Callable[[], Workflow]] = _builders()
