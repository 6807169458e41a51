"""`alas bench open`: the store requests one pod (or one controller request) makes against a run, as the
run's log grows.

A run is built the way the ``alas-plan`` workflow builds it (a blueprint step recording the instance, a
committed baseline), then padded with ``node.succeeded`` events to the wanted length; none of that is
counted. Then, each through a fresh store object (a new pod has a new client and an empty cache), and each
counted separately:

- ``open``: open the run, read its current plan, append one event (the least any step does);
- ``job_agent``: a whole ``alas step job-agent`` pod (:func:`alas_argo.steps.run_step`);
- ``controller``: one ``POST /runs/<id>/disruptions`` handled by the repair service (right-shift repair).

On S3 the figure is HTTP requests as botocore puts them on the wire (:attr:`S3Store.requests_sent`); on the
filesystem it is store operations (each get, put, list or exists), counted by :class:`CountingStore`.
"""

from __future__ import annotations

import builtins
import contextlib
import threading
import uuid
from collections.abc import Callable
from typing import Any

from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog
from alas_argo.log.store import Store, open_store
from alas_argo.settings import Settings, StoreKind, load_settings

__all__ = ["CountingStore", "build_run", "measure_open", "run_open_bench"]

#: A 6x6 instance: small enough that the measured pods spend their time on the log, not on planning.
OPEN_INSTANCE = "ft06"
#: What each measurement does, in report order.
KINDS = ("open", "job_agent", "controller")


class CountingStore(Store):
    """A store that delegates to another and counts every operation (thread-safe).

    Args:
        inner: The store doing the work.
    """

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.location = inner.location
        self.seal_key = getattr(inner, "seal_key", None)
        self.operations = 0
        self._lock = threading.Lock()

    def _tick(self) -> None:
        with self._lock:
            self.operations += 1

    def where(self, key: str) -> str:
        """The inner store's :meth:`Store.where` (not counted: no operation)."""
        return self.inner.where(key)

    def put_if_absent(self, *, key: str, data: bytes) -> bool:
        """Counted :meth:`Store.put_if_absent`."""
        self._tick()
        return self.inner.put_if_absent(key=key, data=data)

    def put(self, *, key: str, data: bytes) -> None:
        """Counted :meth:`Store.put`."""
        self._tick()
        self.inner.put(key=key, data=data)

    def get(self, *, key: str) -> bytes:
        """Counted :meth:`Store.get`."""
        self._tick()
        return self.inner.get(key=key)

    def list(self, *, prefix: str, start_after: str | None = None) -> builtins.list[str]:
        """Counted :meth:`Store.list`."""
        self._tick()
        return self.inner.list(prefix=prefix, start_after=start_after)

    def exists(self, *, key: str) -> bool:
        """Counted :meth:`Store.exists`."""
        self._tick()
        return self.inner.exists(key=key)

    def children(self, *, prefix: str) -> builtins.list[str]:
        """Counted :meth:`Store.children`."""
        self._tick()
        return self.inner.children(prefix=prefix)


def _counted(make_store: Callable[[], Store]) -> tuple[Store, Callable[[], int]]:
    """A fresh store and a reader of the requests it has made so far."""
    from alas_argo.log.s3_store import S3Store

    store = make_store()
    if isinstance(store, S3Store):
        return store, lambda: store.requests_sent
    counting = CountingStore(store)
    return counting, lambda: counting.operations


def build_run(store: Store, run_id: str, events: int) -> str:
    """Write a run of at least ``events`` events: blueprint, baseline v1, padding. Returns the blueprint's
    output key (the job agents' input)."""
    from alas_argo.jssp.catalog import get_instance
    from alas_argo.jssp.dispatching import dispatch
    from alas_argo.steps import StepInput, run_step

    out = run_step(StepInput(kind="blueprint", node="blueprint", run_id=run_id, scope="wf-build",
                             run_inputs={"instance": OPEN_INSTANCE}), store)
    log = ExecutionLog(store, run_id)
    log.commit_plan(dispatch(get_instance(OPEN_INSTANCE)).to_json(), node_id="commit-plan", reason="plan")
    for i in range(max(0, events - len(log.events()))):
        log.append(EventType.NODE_SUCCEEDED, node_id="padding", payload={"i": i})
    return out.params["key"]


def measure_open(make_store: Callable[[], Store], run_id: str, blueprint_key: str) -> dict[str, int]:
    """Requests of each kind of access (see the module docstring), each through a fresh store."""
    from alas_argo.controller.contracts import DisruptionRequest
    from alas_argo.controller.repair_service import RepairService
    from alas_argo.steps import StepInput, run_step

    out: dict[str, int] = {}
    store, sent = _counted(make_store)
    log = ExecutionLog(store, run_id)
    log.current_plan()
    log.append(EventType.NODE_STARTED, node_id="probe")
    out["open"] = sent()

    store, sent = _counted(make_store)
    run_step(StepInput(kind="job-agent", node="agents", run_id=run_id, scope=f"wf-{uuid.uuid4().hex[:6]}",
                       item=0, inputs={"blueprint": blueprint_key}, run_inputs={"instance": OPEN_INSTANCE}), store)
    out["job_agent"] = sent()

    store, sent = _counted(make_store)
    request = DisruptionRequest.model_validate({"time": 0, "method": "right-shift", "budget": 1, "events": [
        {"kind": "machine_breakdown", "machine": 0, "start": 0, "duration": 1}]})
    RepairService(store).handle(run_id, request, f"bench-{uuid.uuid4().hex}")
    out["controller"] = sent()
    return out


def run_open_bench(settings: Settings, sizes: list[int]) -> dict[str, Any]:
    """Requests per access for runs of each size in ``sizes`` (starting a loopback S3 server when needed)."""
    from alas_argo.benchmarks.log import loopback_s3

    with contextlib.ExitStack() as stack:
        if settings.store.kind is StoreKind.S3 and not settings.store.s3_endpoint:
            settings = load_settings(store=stack.enter_context(loopback_s3()))
        rows = []
        for size in sizes:
            run_id = f"bench-open-{size}-{uuid.uuid4().hex[:6]}"
            writer = open_store(settings)
            key = build_run(writer, run_id, size)
            events = len(ExecutionLog(writer, run_id).events())
            rows.append({"events": events, **measure_open(lambda: open_store(settings), run_id, key)})
        return {"store": open_store(settings).location, "unit": "http requests" if settings.store.kind is StoreKind.S3
                else "store operations", "rows": rows}
