"""`alas run`'s blueprint carries the run's own limits into the workflow the local runtime executes: ``workers``
job agents at once (the propose map's concurrency), ``max_revalidations`` rounds of validate -> repair (the
revalidation loop's guard) and ``agent_timeout`` seconds per job agent (the agent policy's timeout). The existing
tests build it with the defaults only, which equal the definition's own defaults for two of the three."""

from __future__ import annotations

from alas_argo.pipeline import RunConfig, build_workflow


def test_the_runs_limits_shape_the_workflow() -> None:
    wf = build_workflow(RunConfig(instance="ft06", workers=3, max_revalidations=5, agent_timeout=7.5))
    assert wf.node("propose").max_concurrency == 3
    guard = wf.policies["revalidate"].loop_guard
    assert guard is not None and guard.max_iters == 5
    assert wf.policies["agent"].timeout == 7.5


def test_the_defaults_are_the_run_configs() -> None:
    config = RunConfig(instance="ft06")
    wf = build_workflow(config)
    guard = wf.policies["revalidate"].loop_guard
    assert wf.node("propose").max_concurrency == config.workers
    assert guard is not None and guard.max_iters == config.max_revalidations
    assert wf.policies["agent"].timeout == config.agent_timeout
