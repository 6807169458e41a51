"""The controller's core, free of HTTP: repair a run's current plan after a disruption and commit it.

No lost update: the repaired plan is committed with ``commit_plan(expect_current=base)``, a compare-and-
swap the log evaluates against the complete event chain with its create-only-if-absent put, so two
repairs started from the same version (in this process or in another replica) cannot both land; the loser
re-reads the new current plan and repairs that one. Within one process a per-run lock also keeps
concurrent requests for one run from doing the same work twice.

Idempotency: the Idempotency-Key is the commit's idempotency key in the log (``controller/<key>``), so the
log's guard lets one commit per key land, however many replicas race; a fingerprint of the request goes
into the commit's metadata and into the log's idempotency record, kept under the same ``controller/<key>``
(apart from the records of workflow steps, ``output/<scope>/<node>``, which a client's key may spell). A
repeated key returns the recorded answer (even if the record was not yet written when the committing request
died, or was written under the bare key before records moved under ``controller/``: the commit is found by
its key in the log's head); a key reused for a different request is refused.

Every acknowledged disruption is in force afterwards: an answer names the commit that carries its own
disruption (never another request's commit that happens to hold the same plan), and that commit's
disruption is the one in force at its base carried forward, so later commits carry it too.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

from alas_argo import metrics
from alas_argo.controller.contracts import DisruptionRequest, RepairResponse
from alas_argo.errors import ConflictError, InputError
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import Disruption, carry_forward
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.instance import Instance
from alas_argo.jssp.repair import RepairResult, repair
from alas_argo.jssp.schedule import Schedule
from alas_argo.log import EventType, ExecutionLog, Store
from alas_argo.log.instances import named_instance

# carry_forward: re-exported from jssp.disruption
__all__ = ["RepairService", "RunNotFound", "carry_forward", "commit_key"]

Repairer = Callable[..., RepairResult]


class RunNotFound(InputError):
    """The run does not exist or has no committed plan to repair (HTTP 404)."""


def commit_key(key: str) -> str:
    """The log's key of a request's Idempotency-Key, for its commit and its idempotency record (``/`` cannot
    occur in a run id, so it never meets the pipeline's ``<run>:<node>`` keys, nor a step's ``output/...``)."""
    return f"controller/{key}"


def _instance_ref(instance: Instance) -> dict[str, Any]:
    """How ``repair.finished`` names the instance (replay's payload contract): by name when it is the bundled
    instance of that name, else in full (a custom instance's name means nothing to a replay)."""
    try:
        if get_instance(instance.name) == instance:
            return {"name": instance.name}
    except InputError:  # not a bundled name
        pass
    return instance.to_json()


def _disruption_in_force(log: ExecutionLog, version: int) -> Disruption | None:
    """The cumulative disruption plan ``version`` was repaired for (None for an undisrupted plan): the one its
    commit recorded, else the latest disruption observed before its commit by anyone but the controller.

    A controller's observation belongs to the controller's own commit, which records its disruption: one that is
    the latest before a commit without one is a request still repairing, failed, or beaten to that commit. Taken
    for the commit's, it was carried forward onto itself (a request whose compare-and-swap lost to a restore
    committed its breakdown twice), or into the next request's repair.
    """
    commit = log.plan_event(version)
    meta = commit.payload.get("meta") or {}
    if "disruption" in meta:
        return Disruption.model_validate(meta["disruption"])
    ref = log.version_ref(version)
    observed = log.event(ref.observed) if ref is not None and ref.observed is not None else None
    if observed is not None and observed.payload.get("source") == "controller" and ref is not None:
        # Rare (a commit without a disruption landed while a request was in flight): one full read finds the
        # latest observation of the others before it.
        others = [e for e in log.events()[:ref.seq] if e.type is EventType.DISRUPTION_OBSERVED
                  and e.payload.get("source") != "controller"]
        observed = others[-1] if others else None
    if observed is not None and "disruption" in observed.payload:
        return Disruption.model_validate(observed.payload["disruption"])
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
        if max_concurrent < 1:
            raise ValueError(f"max_concurrent must be at least 1, got {max_concurrent}")  # 0 slots: every request hangs
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
        record = log.idempotency_get(commit_key(key))
        if record is None:  # the committing request may have died before writing the record (module doc)
            version = log.head().commit_keys.get(commit_key(key))
            if version is not None:
                record = _recorded_response(log, version)
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
            retracted = log.retracted()
            why = f" (retracted: {', '.join(f'v{v}' for v in retracted)})" if retracted else ""
            raise RunNotFound(f"run {log.run_id} has no committed plan in force to repair{why}",
                              where=f"run {log.run_id}")
        base, plan_doc = current
        instance = named_instance(log, fallback=str(plan_doc.get("instance", "")))
        baseline = Schedule.model_validate(plan_doc)
        # The CLI's rules for a disruption file (the request model already refused an empty event list).
        check_disruption(instance, baseline, request.disruption())
        disruption = carry_forward(_disruption_in_force(log, base), request.disruption())
        log.append(EventType.DISRUPTION_OBSERVED, node_id="controller",
                   payload={"disruption": disruption.to_json(), "source": "controller", "base_version": base})
        log.append(EventType.REPAIR_STARTED, node_id="controller",
                   payload={"method": request.method, "base_version": base})
        with self._slots:
            result = self.repairer(instance, baseline, disruption, request.method, request.budget,
                                   workers=self.workers, effort=request.effort, tolerance=request.tolerance,
                                   first_edit=request.first_edit)
        response = {
            "run_id": log.run_id, "parent_version": base, "makespan": result.makespan,
            "baseline_makespan": result.baseline_makespan, "moved_operations": result.moved_operations,
            "total_start_shift": result.total_start_shift, "edit_radius": result.edit_radius,
            "method": result.method, "fallback": result.fallback, "seconds": result.seconds}
        log.append(EventType.REPAIR_FINISHED, node_id="controller", payload={
            "instance": _instance_ref(instance), "baseline": baseline.to_json(),
            "disruption": disruption.to_json(), "method": result.method, "budget": request.budget,
            "effort": request.effort, "tolerance": request.tolerance, "first_edit": request.first_edit.value,
            "plan": result.schedule.to_json(),
            "metrics": result.metrics()})
        attempt = uuid.uuid4().hex  # tells this request's commit from a concurrent one with the same key
        # The key makes the commit once-only across replicas (the guard checks it against the complete
        # chain); expect_current makes it a compare-and-swap, so every acknowledged disruption is carried.
        version = log.commit_plan(
            result.schedule.to_json(), node_id="controller", reason="repair", parent_version=base,
            expect_current=base, idempotency_key=commit_key(key),
            meta={"disruption": disruption.to_json(), "idempotency_key": key, "source": "controller",
                  "attempt": attempt, "response": {**response, "fingerprint": fingerprint}})
        recorded = _recorded_response(log, version)
        if recorded.get("fingerprint") != fingerprint:  # a different request with this key won the race
            raise InputError("Idempotency-Key was already used for a different request", where="Idempotency-Key")
        ours = (log.plan_event(version).payload.get("meta") or {}).get("attempt") == attempt
        winner = log.idempotency_put(commit_key(key), recorded)
        if ours:
            metrics.count_plan_committed("repair")
            gap = (result.makespan - result.baseline_makespan) / max(1, result.baseline_makespan)
            metrics.observe_repair(result.method, result.seconds, result.moved_operations, result.edit_radius,
                                   gap, fallback=result.fallback)
        body = {k: v for k, v in winner.items() if k != "fingerprint"}
        return RepairResponse.model_validate({**body, "idempotent_replay": not ours})


def _recorded_response(log: ExecutionLog, version: int) -> dict[str, Any]:
    """The answer the commit of ``version`` recorded (its fingerprint included), with its version."""
    meta = log.plan_event(version).payload.get("meta") or {}
    return {**meta.get("response", {}), "version": version}
