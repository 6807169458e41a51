"""Cluster-side choices of a compiled Argo workflow that are not part of the IR (image, names of the chart's
objects, run id, cleanup), and the container and pod security every template gets from them."""

from __future__ import annotations

from typing import Any

from alas_argo.engines.extras import dumps

__all__ = ["EXECUTOR_PATCH", "ArgoOptions", "container", "pod_security"]

_SECURITY = {"runAsNonRoot": True, "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
             "capabilities": {"drop": ["ALL"]}}
_EXECUTOR = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


class ArgoOptions:
    """Cluster-side choices that are not part of the IR.

    The defaults are the names a Helm release called ``alas`` creates (charts/alas); the chart rewrites them
    per release (``templates/workflowtemplates.yaml``), so a rendered template also works on its own with
    ``argo template create``.

    Args:
        image: The image every template runs.
        namespace: Namespace of the object (None leaves it to the submitter).
        kind: ``Workflow`` (``generateName``) or ``WorkflowTemplate`` (``name``).
        service_account: ServiceAccount the pods run as.
        store_config: ConfigMap with the ``ALAS_STORE__*`` settings.
        store_secret: Secret with the S3 keys (``accessKey``, ``secretKey``), as the chart creates it.
        memo_cache: ConfigMap for Argo ``memoize`` on idempotent nodes, or None (the default) to rely on the
            log's idempotency records alone: Argo's controller needs create/update on ConfigMaps for memoize,
            which a stock install does not grant.
        run_id: Expression of the log run id (``{{workflow.name}}``, or a workflow parameter).
        run_as_user: UID (and GID) of every pod (the image's non-root user).
        pod_gc: Argo ``podGC.strategy`` (pods of succeeded steps go at once: fan-outs do not pile up).
        ttl_after_success: Seconds a succeeded workflow is kept (``ttlStrategy``).
        ttl_after_failure: Seconds a failed workflow is kept, for inspection.
    """

    def __init__(self, *, image: str, namespace: str | None = None, kind: str = "Workflow",
                 service_account: str = "alas-workflow", store_config: str = "alas-store",
                 store_secret: str = "alas-s3-credentials", memo_cache: str | None = None,
                 run_id: str = "{{workflow.name}}", run_as_user: int = 10001, pod_gc: str = "OnPodSuccess",
                 ttl_after_success: int = 86_400, ttl_after_failure: int = 604_800) -> None:
        if kind not in ("Workflow", "WorkflowTemplate"):
            raise ValueError(f"kind must be Workflow or WorkflowTemplate, not {kind!r}")
        self.image, self.namespace, self.kind = image, namespace, kind
        self.service_account, self.store_config, self.store_secret = service_account, store_config, store_secret
        self.memo_cache, self.run_id = memo_cache, run_id
        self.run_as_user, self.pod_gc = run_as_user, pod_gc
        self.ttl_after_success, self.ttl_after_failure = ttl_after_success, ttl_after_failure


def pod_security(run_as_user: int) -> dict[str, Any]:
    """The pod-level securityContext of every workflow pod (Pod Security "restricted")."""
    return {"runAsNonRoot": True, "runAsUser": run_as_user, "runAsGroup": run_as_user, "fsGroup": run_as_user,
            "seccompProfile": {"type": "RuntimeDefault"}}


#: Argo adds its own ``init`` and ``wait`` containers to every pod, with the securityContext of the
#: controller's ``executor`` setting, which a stock install leaves empty; Pod Security "restricted" would
#: then refuse the pod. The workflow-level podSpecPatch gives them what "restricted" asks of a container
#: (the pod-level context above covers runAsNonRoot and seccomp).
EXECUTOR_PATCH = dumps({"initContainers": [{"name": "init", "securityContext": _EXECUTOR}],
                        "containers": [{"name": "wait", "securityContext": _EXECUTOR}]})


def container(opts: ArgoOptions, args: list[str]) -> dict[str, Any]:
    """The container of every step template: ``alas <args>`` on the one image, store settings from the chart."""
    # The chart's ConfigMap holds ALAS_STORE__* (kind, endpoint, bucket); its Secret the S3 keys.
    env = [{"name": var, "valueFrom": {"secretKeyRef": {"name": opts.store_secret, "key": key}}}
           for var, key in (("AWS_ACCESS_KEY_ID", "accessKey"), ("AWS_SECRET_ACCESS_KEY", "secretKey"))]
    env.append({"name": "HOME", "value": "/tmp"})
    return {"image": opts.image, "command": ["alas"], "args": args, "env": env,
            "envFrom": [{"configMapRef": {"name": opts.store_config}}],
            "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}, "securityContext": _SECURITY,
            "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}]}
