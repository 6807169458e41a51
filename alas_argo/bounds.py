"""The largest counts a run accepts, shared by the flags and the models they fill so the two cannot disagree.

A flag refuses a value out of range when it is parsed (:func:`alas_argo.cli.flag_values.whole`), before any
work; the model refuses the same value when it comes from elsewhere (an environment variable, a resource, a
request). Each bound is far above what a run needs and low enough that a run at the bound still ends.
"""

from __future__ import annotations

__all__ = ["MAX_FAULTS", "MAX_FEEDBACK_ROUNDS", "MAX_LOCAL_DISRUPTIONS", "MAX_RETRIES",
           "MAX_WAIT_SECONDS", "MAX_WORKERS"]

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
#: Longest wait anything is told to make, in seconds: a timeout, a backoff delay, a loop's deadline, a polling
#: interval. A year, the longest a Step Functions standard execution runs. Python's timers overflow near 9.2e9
#: s, and a larger wait passed every check before it reached one: ``alas run --llm-timeout 1e300`` failed its
#: propose step with an OverflowError from the socket, and an IR backoff of ``initial: 1e12`` failed its node
#: with one from the sleep between attempts.
MAX_WAIT_SECONDS = 365 * 86_400.0
