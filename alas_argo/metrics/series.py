"""Every Prometheus metric of the project, in one place: the series and the helpers that record them.

The runtime, the pipeline, the log and the controller call the small ``observe_*`` / ``count_*`` helpers
below; nothing else creates metrics. All metrics live in one dedicated :data:`REGISTRY` (not the global
default one, so that importing this module never exports process metrics by surprise and tests can read
exact values), which :mod:`alas_argo.metrics.exporter` serves over HTTP and renders as text.

Conventions (https://prometheus.io/docs/practices/naming/): base units (seconds), counters end in
``_total``, every metric starts with ``alas_``. Label values come from small closed sets; a value outside
the expected shape, or beyond :data:`MAX_LABEL_VALUES` distinct values of one label, is recorded as
``other`` so that a bug upstream can never explode the number of series.

``prometheus-client`` is a base dependency (small, pure Python): the embedded default install has real
metrics too, and ``alas run`` can serve ``/metrics`` without the ``cluster`` extra.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = [
    "MAX_LABEL_VALUES",
    "REGISTRY",
    "PolicyEvent",
    "RunOutcome",
    "count_http_request",
    "count_operator_action",
    "count_operator_failure",
    "count_plan_committed",
    "count_plan_retracted",
    "count_policy_event",
    "count_run_outcome",
    "label_value",
    "observe_llm_exchange",
    "observe_log_append",
    "observe_operator_pass",
    "observe_repair",
    "observe_repair_record",
    "observe_validation",
]

#: Distinct values one label may take before further values are folded into ``other``.
MAX_LABEL_VALUES = 32

#: The registry the exporter serves; tests read exact sample values from it.
REGISTRY = CollectorRegistry(auto_describe=True)

_LABEL_SHAPE = re.compile(r"^[a-z][a-z0-9_-]{0,39}\Z")
_seen: dict[str, set[str]] = {}
_seen_lock = threading.Lock()


class PolicyEvent(StrEnum):
    """Policy actions the executors report (docs/ir-and-engines.md)."""

    RETRY = "retry"
    TIMEOUT = "timeout"
    COMPENSATION = "compensation"
    LOOP_GUARD_TRIP = "loop_guard_trip"


class RunOutcome(StrEnum):
    """How a run ended."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    COMPENSATED = "compensated"


PLANS_COMMITTED = Counter(
    "alas_plans_committed_total", "Plan versions committed to the execution log.", ["source"],
    registry=REGISTRY)
PLANS_RETRACTED = Counter(
    "alas_plans_retracted_total", "Plan versions withdrawn by a compensation (plan.retracted events appended).",
    registry=REGISTRY)
VALIDATIONS = Counter(
    "alas_validations_total", "Validator verdicts on candidate plans.", ["verdict"], registry=REGISTRY)
VIOLATIONS = Counter(
    "alas_validation_violations_total", "Violations reported by the validator, by code.", ["code"],
    registry=REGISTRY)
REPAIRS = Counter(
    "alas_repairs_total", "Repairs performed, by method and whether they fell back to a full re-solve.",
    ["method", "fallback"], registry=REGISTRY)
REPAIR_SECONDS = Histogram(
    "alas_repair_duration_seconds", "Wall time of one repair.", ["method"], registry=REGISTRY,
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0))
EDIT_RADIUS = Histogram(
    "alas_repair_edit_radius", "Size of the neighbourhood a repair re-optimized (operations).", ["method"],
    registry=REGISTRY, buckets=(0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000))
MOVED_OPERATIONS = Histogram(
    "alas_repair_moved_operations", "Operations whose start changed in a repair.", ["method"],
    registry=REGISTRY, buckets=(0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000))
MAKESPAN_GAP = Histogram(
    "alas_repair_makespan_gap_ratio",
    "Relative makespan gap of the repaired plan, (makespan - reference) / reference.", ["method"],
    registry=REGISTRY, buckets=(0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0))
POLICY_EVENTS = Counter(
    "alas_policy_events_total", "Policy actions: retries, timeouts, compensations, loop-guard trips.",
    ["event"], registry=REGISTRY)
LOG_APPEND_SECONDS = Histogram(
    "alas_log_append_duration_seconds", "Latency of one append to the execution log.", ["backend"],
    registry=REGISTRY, buckets=(0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
RUNS = Counter("alas_runs_total", "Runs finished, by outcome.", ["outcome"], registry=REGISTRY)
LLM_CALLS = Counter(
    "alas_llm_calls_total", "HTTP calls to the LLM endpoint (retries included), by agent role.", ["role"],
    registry=REGISTRY)
LLM_TOKENS = Counter(
    "alas_llm_tokens_total", "Tokens exchanged with the LLM endpoint, by kind (prompt or completion).", ["kind"],
    registry=REGISTRY)
LLM_FAILURES = Counter(
    "alas_llm_failures_total", "LLM exchanges that gave no answer or an unusable one, by kind.", ["kind"],
    registry=REGISTRY)
LLM_LATENCY_SECONDS = Histogram(
    "alas_llm_exchange_duration_seconds", "Wall time of one LLM exchange (all its calls).", ["role"],
    registry=REGISTRY, buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0))
HTTP_REQUESTS = Counter(
    "alas_http_requests_total", "Requests the controller answered, by route and status code.",
    ["route", "code"], registry=REGISTRY)
OPERATOR_ACTIONS = Counter(
    "alas_operator_actions_total", "Actions the operator applied, by kind.", ["action"], registry=REGISTRY)
OPERATOR_ACTION_FAILURES = Counter(
    "alas_operator_action_failures_total", "Actions the operator tried and could not apply (retried next pass).",
    ["action"], registry=REGISTRY)
OPERATOR_PASSES = Counter(
    "alas_operator_reconcile_passes_total", "Reconcile passes of the operator, by outcome (ok, failed).",
    ["outcome"], registry=REGISTRY)
OPERATOR_LAST_PASS = Gauge(
    "alas_operator_last_pass_timestamp_seconds", "When the operator last finished a reconcile pass (Unix time).",
    registry=REGISTRY)
UP = Gauge("alas_exporter_up", "1 while this process's exporter is serving.", registry=REGISTRY)

#: Routes of the controller, the only values of the ``route`` label.
HTTP_ROUTES = frozenset({"disruptions", "run", "healthz", "readyz", "metrics", "other"})


def label_value(label: str, value: str) -> str:
    """Return ``value`` if it is a safe label value for ``label``, else ``"other"``.

    A value is safe when it is a short lower-case identifier (letters, digits, ``_``, ``-``) and the label
    has not yet taken :data:`MAX_LABEL_VALUES` distinct values in this process.
    """
    value = str(value).lower()
    if not _LABEL_SHAPE.match(value):
        return "other"
    with _seen_lock:
        seen = _seen.setdefault(label, set())
        if value in seen:
            return value
        if len(seen) >= MAX_LABEL_VALUES:
            return "other"
        seen.add(value)
    return value


def count_plan_committed(source: str = "plan") -> None:
    """Count one committed plan version; ``source`` is e.g. ``plan``, ``repair`` or ``replan``."""
    PLANS_COMMITTED.labels(source=label_value("source", source)).inc()


def count_plan_retracted() -> None:
    """Count one retracted plan version (the log counts each ``plan.retracted`` it appends, once)."""
    PLANS_RETRACTED.inc()


def observe_validation(valid: bool, codes: Iterable[str] = ()) -> None:
    """Record one validator verdict and the code of each violation it reported."""
    # Both series exist from the first verdict on, so the failure ratio reads 0, not "no data", until one fails.
    for verdict in ("valid", "invalid"):
        VALIDATIONS.labels(verdict=verdict)
    VALIDATIONS.labels(verdict="valid" if valid else "invalid").inc()
    for code in codes:
        VIOLATIONS.labels(code=label_value("code", code)).inc()


def observe_repair(method: str, seconds: float, moved: int, edit_radius: int, makespan_gap: float,
                   *, fallback: bool = False) -> None:
    """Record one repair.

    Args:
        method: Repair method (``lcrp``, ``aor``, ``right-shift``, ``full``, ``full-stable``).
        seconds: Wall time the repair took.
        moved: Operations whose start changed.
        edit_radius: Operations in the neighbourhood that was re-optimized.
        makespan_gap: Relative gap of the repaired makespan to the reference (e.g. the pre-disruption
            makespan or a lower bound); negative values are clamped to 0 (an improvement).
        fallback: Whether the repair fell back to a full re-solve.
    """
    m = label_value("method", method)
    # Both series of a method exist from its first repair on, so a panel or alert on fallbacks reads 0, not
    # "no data", until one happens.
    for flag in ("true", "false"):
        REPAIRS.labels(method=m, fallback=flag)
    REPAIRS.labels(method=m, fallback="true" if fallback else "false").inc()
    REPAIR_SECONDS.labels(method=m).observe(max(0.0, seconds))
    MOVED_OPERATIONS.labels(method=m).observe(max(0, moved))
    EDIT_RADIUS.labels(method=m).observe(max(0, edit_radius))
    MAKESPAN_GAP.labels(method=m).observe(max(0.0, makespan_gap))


def observe_repair_record(record: Mapping[str, Any]) -> None:
    """:func:`observe_repair` from a repair's recorded metrics (``RepairResult.metrics()`` with the plan's
    ``makespan`` and the ``baseline_makespan``); a patch, which records no timing, is not a repair."""
    if "seconds" not in record or "edit_radius" not in record:
        return
    baseline = float(record.get("baseline_makespan") or 0)
    gap = (float(record.get("makespan") or 0) - baseline) / max(1.0, baseline)
    observe_repair(str(record.get("method")), float(record["seconds"]), int(record.get("moved_operations") or 0),
                   int(record["edit_radius"]), gap, fallback=bool(record.get("fallback")))


def count_policy_event(event: PolicyEvent | str) -> None:
    """Count one policy action; unknown names are recorded as ``other``."""
    name = event.value if isinstance(event, PolicyEvent) else str(event)
    POLICY_EVENTS.labels(event=name if name in set(PolicyEvent) else "other").inc()


def observe_log_append(backend: str, seconds: float) -> None:
    """Record the latency of one log append on ``backend`` (``fs`` or ``s3``)."""
    LOG_APPEND_SECONDS.labels(backend=label_value("backend", backend)).observe(max(0.0, seconds))


def observe_llm_exchange(usage: Mapping[str, Any]) -> None:
    """Record one LLM exchange from the planner's usage dict (calls, prompt/completion tokens, latency_s,
    failures, unusable, role)."""
    role = label_value("role", str(usage.get("role") or "job_agent"))
    LLM_CALLS.labels(role=role).inc(max(0, int(usage.get("calls", 0))))
    LLM_TOKENS.labels(kind="prompt").inc(max(0, int(usage.get("prompt_tokens", 0))))
    LLM_TOKENS.labels(kind="completion").inc(max(0, int(usage.get("completion_tokens", 0))))
    for kind in ("failures", "unusable"):
        # Both series exist from the first exchange on: the failures panel reads 0, not "no data".
        LLM_FAILURES.labels(kind=kind).inc(max(0, int(usage.get(kind) or 0)))
    if "latency_s" in usage:
        LLM_LATENCY_SECONDS.labels(role=role).observe(max(0.0, float(usage["latency_s"])))


def count_run_outcome(outcome: RunOutcome | str) -> None:
    """Count one finished run; unknown outcomes are recorded as ``other``."""
    name = outcome.value if isinstance(outcome, RunOutcome) else str(outcome)
    RUNS.labels(outcome=name if name in set(RunOutcome) else "other").inc()


def count_http_request(route: str, code: int) -> None:
    """Count one answered request; ``route`` outside :data:`HTTP_ROUTES` is recorded as ``other``."""
    HTTP_REQUESTS.labels(route=route if route in HTTP_ROUTES else "other", code=str(int(code))).inc()


def count_operator_action(action: str) -> None:
    """Count one applied operator action (``CreateWorkflow``, ``PatchStatus``, ``PostDisruption``)."""
    OPERATOR_ACTIONS.labels(action=label_value("action", action.lower())).inc()


def count_operator_failure(action: str) -> None:
    """Count one operator action that failed (the next pass tries it again)."""
    OPERATOR_ACTION_FAILURES.labels(action=label_value("action", action.lower())).inc()


def observe_operator_pass(ok: bool, finished_at: float) -> None:
    """Record one finished reconcile pass: its outcome and when it ended (seconds since the epoch)."""
    OPERATOR_PASSES.labels(outcome="ok" if ok else "failed").inc()
    OPERATOR_LAST_PASS.set(finished_at)
