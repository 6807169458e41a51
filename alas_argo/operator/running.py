"""The operator's thin I/O: read PlanRuns, Disruptions and Workflows, call the pure reconcilers, apply
their actions with the Kubernetes API and the controller's HTTP API.

It polls (level-triggered, every ``interval`` seconds) instead of watching: simpler to get right, and the
resources change at human pace. ``kubernetes`` is imported lazily by :func:`connect` so that the rest of
the package imports without the ``cluster`` extra.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from alas_argo import json_limits, metrics
from alas_argo.errors import InputError
from alas_argo.file_names import found, read_answer
from alas_argo.operator.actions import (
    Action,
    CreateWorkflow,
    OperatorConfig,
    PatchStatus,
    PostDisruption,
    PostOutcome,
)
from alas_argo.operator.manifests import PLANRUN_LABEL, workflow_name
from alas_argo.operator.reconciling import reconcile_disruption, reconcile_planrun, status_after_post
from alas_argo.operator.resources import DISRUPTION_PLURAL, GROUP, PLANRUN_PLURAL, VERSION, Resource

__all__ = ["CustomObjects", "Operator", "Poster", "connect", "post_disruption"]

log = logging.getLogger(__name__)
ARGO = ("argoproj.io", "v1alpha1", "workflows")
#: The largest controller answer read: a repair's answer is a few kilobytes; a body past this (a misrouted URL
#: streaming something else) is not one, and is not read into memory whole.
MAX_ANSWER_BYTES = 64 * 2**20


class CustomObjects(Protocol):
    """The subset of ``kubernetes.client.CustomObjectsApi`` the operator uses."""

    def list_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                      **kwargs: Any) -> Any: ...

    def create_namespaced_custom_object(self, group: str, version: str, namespace: str, plural: str,
                                        body: Any, **kwargs: Any) -> Any: ...

    def patch_namespaced_custom_object_status(self, group: str, version: str, namespace: str, plural: str,
                                              name: str, body: Any, **kwargs: Any) -> Any: ...


Poster = Callable[[str, dict[str, Any], str, str | None], PostOutcome]


def post_disruption(url: str, body: dict[str, Any], idempotency_key: str, token: str | None,
                    timeout: float = 30.0) -> PostOutcome:
    """POST one disruption to the controller; never raises for HTTP or network failures."""
    headers = {"Content-Type": "application/json", "Idempotency-Key": idempotency_key}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    answer: Any
    try:
        answer = urllib.request.urlopen(request, timeout=timeout)
        status = answer.status
    except urllib.error.HTTPError as e:  # an error status: its body is the answer all the same
        answer, status = e, e.code
    except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
        return PostOutcome(0, message=f"controller unreachable: {getattr(e, 'reason', e)}")
    with answer:  # closed here, not by the collector
        try:
            raw = read_answer(answer, MAX_ANSWER_BYTES)
        except (OSError, http.client.HTTPException) as e:  # the status arrived, the whole body did not
            return _cut_off(e)
    if len(raw) > MAX_ANSWER_BYTES:
        return PostOutcome(status, message=f"answer larger than {MAX_ANSWER_BYTES // 2**20} MiB: not read")
    try:
        doc = json_limits.loads(raw or b"{}")
    except ValueError:
        doc = {}
    doc = doc if isinstance(doc, dict) else {}
    return PostOutcome(status, doc, str(doc.get("error") or doc.get("message") or ""))


def _cut_off(e: BaseException) -> PostOutcome:
    """The outcome of an answer whose body broke off (a timeout or a closed connection mid-body): no answer, so
    the POST is tried again under the same key, and the controller replays the repair if it committed one."""
    return PostOutcome(0, message=f"controller answer cut off: {str(e) or type(e).__name__}")


class Operator:
    """One namespace's reconcile loop.

    Args:
        api: A ``CustomObjectsApi`` (or anything with the same three methods).
        namespace: The namespace to watch.
        config: Templates, ServiceAccount, controller URL and retry policy.
        token: Bearer token for the controller.
        poster: How to POST a disruption (injected in tests).
        clock: Seconds since the epoch (injected in tests).
    """

    def __init__(self, api: CustomObjects, namespace: str, config: OperatorConfig | None = None, *,
                 token: str | None = None, poster: Poster = post_disruption,
                 clock: Callable[[], float] = time.time) -> None:
        self.api, self.namespace = api, namespace
        self.config = config or OperatorConfig()
        self.token, self.poster, self.clock = token, poster, clock
        self.started_at = clock()
        #: When the last reconcile pass of :meth:`run_forever` finished (None before the first).
        self.last_pass_at: float | None = None

    def _list(self, group: str, version: str, plural: str, **kwargs: Any) -> list[dict[str, Any]]:
        return list(self.api.list_namespaced_custom_object(group, version, self.namespace, plural,
                                                           **kwargs).get("items") or [])

    def reconcile_once(self) -> list[Action]:
        """One pass over every PlanRun and Disruption; returns the actions applied."""
        done: list[Action] = []
        # A workflow the API returned without a name cannot be any PlanRun's: left out, not the end of the pass.
        workflows = {name: w for w in self._list(*ARGO, label_selector=PLANRUN_LABEL)
                     if isinstance(name := (w.get("metadata") or {}).get("name"), str)}
        planruns: dict[str, Resource] = {}
        for obj in self._list(GROUP, VERSION, PLANRUN_PLURAL):
            if (resource := self._read(obj)) is None:
                continue
            planruns[resource.name] = resource
            actions = self._decide(resource, lambda r: reconcile_planrun(r, workflows.get(workflow_name(r)),
                                                                          self.config))
            done += self._apply_all(resource, actions)
        for obj in self._list(GROUP, VERSION, DISRUPTION_PLURAL):
            if (resource := self._read(obj)) is None:
                continue
            actions = self._decide(resource, lambda r: reconcile_disruption(r, self.clock(), self.config, planruns))
            done += self._apply_all(resource, actions)
        return done

    @staticmethod
    def _read(obj: Any) -> Resource | None:
        """The object as a Resource, or None (logged, counted) when it cannot be read: one malformed object
        must not end the pass for the others."""
        try:
            return Resource.from_object(obj)
        except Exception as e:
            meta = obj.get("metadata") if isinstance(obj, dict) else None
            name = meta.get("name") if isinstance(meta, dict) else None
            log.warning("reconcile: cannot read object %s: %s", name or "(unnamed)", e)
            metrics.count_operator_failure("Read")
            return None

    @staticmethod
    def _decide(resource: Resource, reconcile: Callable[[Resource], list[Action]]) -> list[Action]:
        """The actions ``reconcile`` decides for ``resource``, or none (logged, counted) when it raises."""
        try:
            return reconcile(resource)
        except Exception as e:
            log.warning("reconcile %s/%s: %s", resource.namespace, resource.name, e)
            metrics.count_operator_failure("Reconcile")
            return []

    def _apply_all(self, resource: Resource, actions: list[Action]) -> list[Action]:
        applied: list[Action] = []
        for action in actions:
            try:
                self.apply(resource, action)
            except Exception as e:  # one broken object must not stop the others; next pass retries
                log.warning("reconcile %s/%s: %s failed: %s", resource.namespace, resource.name,
                            type(action).__name__, e)
                metrics.count_operator_failure(type(action).__name__)
                break
            applied.append(action)
            metrics.count_operator_action(type(action).__name__)
        return applied

    def apply(self, resource: Resource, action: Action) -> None:
        """Carry out one action against the cluster or the controller."""
        if isinstance(action, CreateWorkflow):
            try:
                self.api.create_namespaced_custom_object(*ARGO[:2], action.namespace, ARGO[2], action.manifest)
            except Exception as e:
                if getattr(e, "status", None) != 409:  # AlreadyExists: an earlier pass created it
                    raise
        elif isinstance(action, PatchStatus):
            self.api.patch_namespaced_custom_object_status(GROUP, VERSION, action.namespace, action.plural,
                                                           action.name, {"status": action.status})
        elif isinstance(action, PostDisruption):
            url = f"{self.config.controller_url.rstrip('/')}/runs/{action.run}/disruptions"
            outcome = self.poster(url, action.body, action.idempotency_key, self.token)
            status = status_after_post(resource, outcome, self.clock(), self.config)
            self.api.patch_namespaced_custom_object_status(GROUP, VERSION, action.namespace, DISRUPTION_PLURAL,
                                                           action.name, {"status": status})
        else:
            raise TypeError(f"unknown action {action!r}")

    def run_forever(self, interval: float, stop: threading.Event | None = None) -> None:
        """Reconcile every ``interval`` seconds until ``stop`` is set."""
        stop = stop or threading.Event()
        while not stop.is_set():
            ok = True
            try:
                self.reconcile_once()
            except Exception as e:  # the API server may be briefly away; keep the loop alive
                ok = False
                log.warning("reconcile pass failed: %s", e)
            self.last_pass_at = self.clock()
            metrics.observe_operator_pass(ok, self.last_pass_at)
            stop.wait(interval)

    def liveness(self, max_age: float) -> tuple[bool, str]:
        """Whether the loop finished a pass (or started) within ``max_age`` seconds, and a one-line reason."""
        last = self.last_pass_at if self.last_pass_at is not None else self.started_at
        age = self.clock() - last
        what = "last reconcile pass" if self.last_pass_at is not None else "start, no pass yet,"
        if age <= max_age:
            return True, f"ok: {what} {age:.0f}s ago"
        return False, f"stuck: {what} {age:.0f}s ago (more than {max_age:g}s)"


def connect() -> CustomObjects:
    """A ``CustomObjectsApi`` from the in-cluster config, else from ``~/.kube/config``.

    Raises:
        InputError: when the ``kubernetes`` package (the ``cluster`` extra) is missing or no config exists.
    """
    try:
        from kubernetes import client, config
    except ImportError:
        raise InputError("the operator needs the kubernetes package: pip install 'alas-argo[cluster]'") from None
    try:
        config.load_incluster_config()
    except config.ConfigException:
        # The file(s) named now: the client's own default is KUBECONFIG as it was when the package was first
        # imported, which may name another file than the error below (or load ~/.kube/config instead of failing).
        env = os.environ.get("KUBECONFIG")
        files = env or "~/.kube/config"
        try:
            config.load_kube_config(config_file=files)
        except (config.ConfigException, OSError) as e:
            # Name the file(s) read: the client's own message ("No configuration found") does not.
            missing = [f for f in files.split(os.pathsep) if f and not found(Path(f).expanduser(), file=True)]
            why = f"{', '.join(missing)}: no such file" if missing else str(e)
            source = f"KUBECONFIG={env}" if env else "no KUBECONFIG, so ~/.kube/config"
            raise InputError(f"no Kubernetes configuration found (not in a pod; {source}): {why}") from None
    return client.CustomObjectsApi()
