"""The controller's core, free of HTTP: repair a run's current plan after a disruption and commit it.

No lost update: the repaired plan is committed with ``commit_plan(expect_current=base)``, a compare-and-
swap the log evaluates against the complete event chain with its create-only-if-absent put, so two
repairs started from the same version (in this process or in another replica) cannot both land; the loser
re-reads the new current plan and repairs that one. Within one process a per-run lock also keeps
concurrent requests for one run from doing the same work twice.

Idempotency: the Idempotency-Key and a fingerprint of the request go into the commit's metadata and into
the log's idempotency record. A repeated key returns the recorded answer (even if the record was not yet
written when the committing request died: the commit's metadata is searched too); a key reused for a
different request is refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from alas_argo import metrics
from alas_argo.controller.contracts import DisruptionRequest, RepairResponse
from alas_argo.errors import ConflictError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption, carry_forward
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import RepairResult, repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.log import Event, EventType, ExecutionLog, Store

__all__ = ["RepairService", "RunNotFound", "carry_forward"]  # carry_forward: re-exported from jssp.disruption

Repairer = Callable[..., RepairResult]


class RunNotFound(InputError):
    """The run does not exist or has no committed plan to repair (HTTP 404)."""


def _instance(events: list[Event], plan: dict[str, Any]) -> Instance:
    """The run's instance: the latest full document recorded in the log, else the bundled one named by
    the events or the plan (a custom instance is recorded in full once; later events name it)."""
    refs: list[dict[str, Any]] = [e.payload["instance"] for e in reversed(events)
                                  if isinstance(e.payload.get("instance"), dict)]
    for ref in refs:
        if "jobs" in ref:
            return Instance.model_validate(ref)
    name = str(refs[0].get("name")) if refs and refs[0].get("name") else str(plan.get("instance", ""))
    return get_instance(name)


def _disruption_in_force(events: list[Event]) -> Disruption | None:
    """The cumulative disruption the current plan was repaired for (None for an undisrupted plan)."""
    commits = [i for i, e in enumerate(events) if e.type is EventType.PLAN_COMMITTED]
    if not commits:
        return None
    latest = events[commits[-1]]
    meta = latest.payload.get("meta") or {}
    if "disruption" in meta:
        return Disruption.model_validate(meta["disruption"])
    for event in reversed(events[: commits[-1]]):
        if event.type is EventType.DISRUPTION_OBSERVED and "disruption" in event.payload:
            return Disruption.model_validate(event.payload["disruption"])
    return None


class RepairService:
    """Repairs runs in one store.

    Args:
        store: The execution log's store.
        repairer: The repair entry point (``alas_argo.jssp.repair.repair``; injected in tests).
        workers: CP-SAT workers per repair.
        max_concurrent: Repairs running at once (CP-SAT is CPU-bound); further requests wait.
        max_conflicts: Compare-and-swap losses tolerated per request before answering 409.
    """

    def __init__(self, store: Store, *, repairer: Repairer = repair, workers: int = 1, max_concurrent: int = 2,
                 max_conflicts: int = 3) -> None:
        self.store, self.repairer, self.workers = store, repairer, workers
        self.max_conflicts = max_conflicts
        self._slots = threading.BoundedSemaphore(max_concurrent)
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _lock(self, run_id: str) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(run_id, threading.Lock())

    def ready(self) -> None:
        """Raise StoreUnavailable (or StoreError) unless the store answers."""
        self.store.list(prefix="runs/", start_after="runs/~")

    def _replay(self, log: ExecutionLog, key: str, fingerprint: str) -> RepairResponse | None:
        record = log.idempotency_get(key)
        if record is None:  # the committing request may have died before writing the record
            for event in reversed(log.events()):
                if event.type is not EventType.PLAN_COMMITTED:
                    continue
                meta = event.payload.get("meta") or {}
                if meta.get("idempotency_key") == key and isinstance(meta.get("response"), dict):
                    record = {**meta["response"], "version": int(event.payload["version"])}
                    break
        if record is None:
            return None
        if record.get("fingerprint") != fingerprint:
            raise InputError("Idempotency-Key was already used for a different request",
                             where="Idempotency-Key")
        body = {k: v for k, v in record.items() if k != "fingerprint"}
        return RepairResponse.model_validate({**body, "idempotent_replay": True})

    def handle(self, run_id: str, request: DisruptionRequest, key: str) -> RepairResponse:
        """Repair ``run_id``'s current plan for ``request`` and commit it, at most once per ``key``.

        Raises:
            RunNotFound: no such run, or no committed plan yet.
            InputError: the disruption does not fit the run, or the key was used for another request.
            InfeasibleError: no plan can honour the disruption.
            ConflictError: the plan kept changing under the repair (``max_conflicts`` losses).
            StoreUnavailable: the store is unreachable.
        """
        log = ExecutionLog(self.store, run_id)
        fingerprint = request.fingerprint()
        with self._lock(run_id):
            for _attempt in range(self.max_conflicts):
                if (done := self._replay(log, key, fingerprint)) is not None:
                    return done
                try:
                    return self._repair_once(log, request, key, fingerprint)
                except ConflictError:
                    metrics.count_policy_event(metrics.PolicyEvent.RETRY)
        raise ConflictError(f"the plan of run {run_id} kept changing during the repair; try again",
                            where=f"run {run_id}")

    def _repair_once(self, log: ExecutionLog, request: DisruptionRequest, key: str,
                     fingerprint: str) -> RepairResponse:
        current = log.current_plan()
        if current is None:
            raise RunNotFound(f"run {log.run_id} has no committed plan to repair", where=f"run {log.run_id}")
        base, plan_doc = current
        events = log.events()
        instance = _instance(events, plan_doc)
        baseline = Schedule.model_validate(plan_doc)
        disruption = carry_forward(_disruption_in_force(events), request.disruption())
        log.append(EventType.DISRUPTION_OBSERVED, node_id="controller",
                   payload={"disruption": disruption.to_json(), "source": "controller", "base_version": base})
        log.append(EventType.REPAIR_STARTED, node_id="controller",
                   payload={"method": request.method, "base_version": base})
        with self._slots:
            result = self.repairer(instance, baseline, disruption, request.method, request.budget,
                                   workers=self.workers, effort=request.effort)
        response = {
            "run_id": log.run_id, "parent_version": base, "makespan": result.makespan,
            "baseline_makespan": result.baseline_makespan, "moved_operations": result.moved_operations,
            "total_start_shift": result.total_start_shift, "edit_radius": result.edit_radius,
            "method": result.method, "fallback": result.fallback, "seconds": result.seconds}
        log.append(EventType.REPAIR_FINISHED, node_id="controller", payload={
            "instance": {"name": instance.name}, "baseline": baseline.to_json(),
            "disruption": disruption.to_json(), "method": result.method, "budget": request.budget,
            "effort": request.effort, "plan": result.schedule.to_json(), "metrics": result.metrics()})
        version = log.commit_plan(
            result.schedule.to_json(), node_id="controller", reason="repair", parent_version=base,
            expect_current=base,
            meta={"disruption": disruption.to_json(), "idempotency_key": key, "source": "controller",
                  "response": {**response, "fingerprint": fingerprint}})
        record = {**response, "version": version, "fingerprint": fingerprint}
        winner = log.idempotency_put(key, record)
        metrics.count_plan_committed("repair")
        gap = (result.makespan - result.baseline_makespan) / max(1, result.baseline_makespan)
        metrics.observe_repair(result.method, result.seconds, result.moved_operations, result.edit_radius, gap,
                               fallback=result.fallback)
        body = {k: v for k, v in winner.items() if k != "fingerprint"}
        return RepairResponse.model_validate(body)
