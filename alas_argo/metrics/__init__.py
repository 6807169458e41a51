"""The project's Prometheus metrics: the series and their recording helpers (:mod:`.series`), and their export
(:mod:`.exporter`). ``from alas_argo import metrics`` then ``metrics.observe_repair(...)`` is how the rest of the
project uses them."""

from alas_argo.metrics.exporter import Point, exposition, fold_samples, samples, serve
from alas_argo.metrics.series import (
    MAX_LABEL_VALUES,
    REGISTRY,
    PolicyEvent,
    RunOutcome,
    count_http_request,
    count_operator_action,
    count_operator_failure,
    count_plan_committed,
    count_plan_retracted,
    count_policy_event,
    count_run_outcome,
    label_value,
    observe_llm_exchange,
    observe_log_append,
    observe_operator_pass,
    observe_repair,
    observe_repair_record,
    observe_validation,
)

__all__ = [
    "MAX_LABEL_VALUES",
    "REGISTRY",
    "Point",
    "PolicyEvent",
    "RunOutcome",
    "count_http_request",
    "count_operator_action",
    "count_operator_failure",
    "count_plan_committed",
    "count_plan_retracted",
    "count_policy_event",
    "count_run_outcome",
    "exposition",
    "fold_samples",
    "label_value",
    "observe_llm_exchange",
    "observe_log_append",
    "observe_operator_pass",
    "observe_repair",
    "observe_repair_record",
    "observe_validation",
    "samples",
    "serve",
]
