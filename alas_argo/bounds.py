"""The largest counts a run accepts, shared by the flags and the models they fill so the two cannot disagree.

A flag refuses a value out of range when it is parsed (:func:`alas_argo.cli.flag_values.whole`), before any
work; the model refuses the same value when it comes from elsewhere (an environment variable, a resource, a
request). Each bound is far above what a run needs and low enough that a run at the bound still ends.
"""

from __future__ import annotations

__all__ = ["MAX_FAULTS", "MAX_FEEDBACK_ROUNDS", "MAX_LOCAL_DISRUPTIONS", "MAX_RETRIES", "MAX_WORKERS"]

#: CP-SAT search workers, job agents or repairs running at once.
MAX_WORKERS = 64
#: Rounds in which the validator's violations go back to the job agents.
MAX_FEEDBACK_ROUNDS = 50
#: Structural faults injected into a supervisor's plan (ablation, demonstrations).
MAX_FAULTS = 100
#: Disruptions a local run reveals in sequence (the cluster's alas-plan reveals fewer:
#: :data:`alas_argo.workflows.plan.MAX_DISRUPTIONS`).
MAX_LOCAL_DISRUPTIONS = 20
#: Retries of a transient store or LLM endpoint error: each one waits a backoff, so a trillion retries of a
#: dead endpoint never end, where the point of a bound is a clear error.
MAX_RETRIES = 100
