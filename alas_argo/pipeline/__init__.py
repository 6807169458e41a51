"""The ALAS five layers expressed as one IR workflow, run by the local runtime (docs/architecture.md)."""

from alas_argo.pipeline.blueprint import build_workflow
from alas_argo.pipeline.config import RunConfig, Variant
from alas_argo.pipeline.running import PipelineResult, load_disruptions, run_pipeline
from alas_argo.pipeline.stages import Stages

__all__ = ["PipelineResult", "RunConfig", "Stages", "Variant", "build_workflow", "load_disruptions", "run_pipeline"]
