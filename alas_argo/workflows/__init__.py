"""The workflows ALAS ships, defined once as IR builders inside the package.

``alas render`` compiles them to Argo WorkflowTemplates and ASL state machines (the files in the checkout's
top-level ``workflows/`` directory, which holds rendered files only); ``alas submit NAME`` and
``alas ir export NAME`` build them from here, so a non-editable install has them too.
"""

from __future__ import annotations

from collections.abc import Callable

from alas_argo.ir import Workflow
from alas_argo.workflows import bench, plan, repair

__all__ = ["WORKFLOWS"]

#: Template name -> IR builder.
WORKFLOWS: dict[str, Callable[[], Workflow]] = {
    "alas-plan": plan.build, "alas-bench": bench.build, "alas-repair": repair.build}
