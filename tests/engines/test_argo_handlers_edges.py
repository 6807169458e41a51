"""Edges of alas_argo.engines.argo_handlers left open by mutation testing: the one compensate pod retries only
on errors that some compensation allowed to be retried (a compensation with one attempt widens nothing, even
when its ``retry_on`` names every error), and ``exit_handler`` itself leaves ``retryStrategy`` out when no
compensation retries (``to_argo`` drops null fields, so only the function's own answer shows a null one)."""

from __future__ import annotations

from typing import Any

from alas_argo.engines import argo_names as nm
from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_handlers import exit_handler
from alas_argo.engines.argo_options import ArgoOptions
from alas_argo.ir import Policy, Retry
from tests.engines.samples import minimal
from tests.engines.test_compensation import compensate_template, undo_policies


def test_a_one_attempt_compensations_errors_do_not_widen_the_pods_retries() -> None:
    """``uncommit`` is never retried, whatever it names; only ``unpublish``'s Timeout may retry the pod."""
    once = Policy(retry=Retry(max_attempts=1, retry_on=["*"]))
    twice = Policy(retry=Retry(max_attempts=2, retry_on=["Timeout"]))
    strategy = compensate_template(undo_policies(once, twice))["retryStrategy"]
    assert strategy["limit"] == "1"
    assert strategy["expression"] == "lastRetry.message contains 'deadline'"


def test_the_handler_has_no_retry_strategy_field_when_no_compensation_retries() -> None:
    handler = exit_handler(undo_policies(None, None), ArgoOptions(image="alas:test"))
    assert [t["name"] for t in handler] == [nm.EXIT_HANDLER, nm.COMPENSATE]
    assert "retryStrategy" not in handler[1]


def test_no_compensation_no_handler() -> None:
    wf = minimal()
    assert all(wf.compensation_of(n) is None for n in wf.nodes)
    assert exit_handler(wf, ArgoOptions(image="alas:test")) == []
    spec: dict[str, Any] = to_argo(wf, image="alas:test")["spec"]
    assert "onExit" not in spec
