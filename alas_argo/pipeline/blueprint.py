"""Layer 1: the blueprint — the run as one canonical IR workflow, validated before anything runs.

The workflow is the one pipeline definition (:mod:`alas_argo.workflows.plan`), the same the cluster runs as
``alas-plan``, shaped for the local runtime: as many disruption segments as the run reveals, the job fan-out
as wide as ``workers``, thread-level policies.
"""

from __future__ import annotations

from alas_argo.ir import Workflow
from alas_argo.pipeline.config import RunConfig
from alas_argo.workflows.plan import Engine, Shape, pipeline

__all__ = ["build_workflow"]


def build_workflow(config: RunConfig, *, disruptions: int = 0) -> Workflow:
    """The ALAS workflow for ``config`` with ``disruptions`` disruptions revealed in sequence.

    Raises:
        WorkflowError: the blueprint fails IR validation (it is rejected, never run).
    """
    return pipeline(Shape(engine=Engine.LOCAL, disruptions=disruptions, job_concurrency=config.workers,
                          max_revalidations=config.max_revalidations, agent_timeout=config.agent_timeout))
