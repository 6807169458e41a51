"""Layer 1: the blueprint — the run as one canonical IR workflow, validated before anything runs.

The workflow is the one pipeline definition (:mod:`alas_argo.workflows.plan`), the same the cluster runs as
``alas-plan``, shaped for the local runtime: as many disruption segments as ``alas-plan`` is rendered with, or as
the run reveals when that is more (the segments it does not use pass the plan through, as on the cluster), the
job fan-out as wide as ``workers``, thread-level policies.
"""

from __future__ import annotations

from alas_argo.ir import Workflow
from alas_argo.pipeline.config import RunConfig
from alas_argo.workflows.plan import MAX_DISRUPTIONS, Engine, Shape, pipeline

__all__ = ["build_workflow"]


def build_workflow(config: RunConfig, *, disruptions: int = 0) -> Workflow:
    """The ALAS workflow for ``config`` with ``disruptions`` disruptions revealed in sequence (the definition
    ``alas-plan`` renders when that is at most :data:`~alas_argo.workflows.plan.MAX_DISRUPTIONS`).

    Raises:
        WorkflowError: the blueprint fails IR validation (it is rejected, never run).
    """
    return pipeline(Shape(engine=Engine.LOCAL, disruptions=max(disruptions, MAX_DISRUPTIONS),
                          job_concurrency=config.workers, max_revalidations=config.max_revalidations,
                          agent_timeout=config.agent_timeout))
