"""The templates of a compiled Argo workflow: one container template per node (a DAG wrapper plus an item
template for map nodes), the ``main`` DAG with ``depends``/``when``/``withParam``, and the exit handler.
Used by :func:`alas_argo.engines.argo.to_argo`; pure functions of the IR."""

from __future__ import annotations

import re
from typing import Any

from alas_argo.engines import argo_names as nm
from alas_argo.engines.conformance import UnsupportedFeature
from alas_argo.engines.extras import dumps
from alas_argo.ir import BackoffKind, Join, Node, NodeKind, OnFailure, Policy, Via, Workflow

__all__ = ["EXECUTOR_PATCH", "ArgoOptions", "Compiler", "pod_security"]

# Argo template and task names: lowercase DNS-label characters (the IR allows '_' and capitals).
_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")

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


def _deps(wf: Workflow) -> dict[str, list[tuple[str, Via]]]:
    out: dict[str, list[tuple[str, Via]]] = {n.id: [] for n in wf.nodes}
    for d in wf.dependencies():
        out[d.target].append((d.source, d.via))
    return out


def _data_deps(node: Node, deps: list[tuple[str, Via]]) -> list[str]:
    # any_of candidates may be skipped (their outputs do not exist); the step finds the winner in the log.
    if node.join is Join.ANY_OF:
        return []
    return list(dict.fromkeys(s for s, via in deps if via is not Via.CATCH))


def _retry(policy: Policy) -> dict[str, Any] | None:
    r = policy.retry
    if r.max_attempts <= 1:
        return None
    factor = 1.0 if r.backoff.kind is not BackoffKind.EXPONENTIAL else r.backoff.factor
    backoff: dict[str, Any] = {"duration": nm.format_duration(r.backoff.initial),
                               "factor": int(factor) if float(factor).is_integer() else str(factor)}
    if r.backoff.max is not None:
        backoff["cap"] = nm.format_duration(r.backoff.max)
    retry_policy, expression = nm.retry_expression(r.retry_on)
    out: dict[str, Any] = {"limit": str(r.max_attempts - 1), "retryPolicy": retry_policy, "backoff": backoff}
    if expression is not None:
        out["expression"] = expression
    return out


def _check_names(wf: Workflow) -> None:
    """Every node needs its own valid Argo template name (and its map item template one too)."""
    taken = {nm.MAIN: "(entrypoint)", nm.EXIT_HANDLER: "(exit handler)", nm.COMPENSATE: "(compensation)"}
    for n in wf.nodes:
        names = [nm.dns(n.id)] + ([f"{nm.dns(n.id)}-item"] if n.kind is NodeKind.MAP else [])
        for name in names:
            if not _NAME.match(name):
                raise UnsupportedFeature("argo", n.id, "node_id", f"{name!r} is not a valid Argo template name")
            if name in taken:
                raise UnsupportedFeature("argo", n.id, "node_id", f"template name {name!r} is already used by "
                                         f"{taken[name]}")
            taken[name] = f"node {n.id}"


class Compiler:
    """Builds the Argo document of one workflow."""

    def __init__(self, wf: Workflow, opts: ArgoOptions) -> None:
        self.wf, self.o = wf, opts
        _check_names(wf)
        self.deps = _deps(wf)
        self.comp_ids = wf.compensation_ids()
        self.inputs: dict[str, Any] = dict(wf.meta.get("inputs") or {})
        # Fields of a node's output that map nodes fan out over become output parameters of that node.
        self.fields: dict[str, list[str]] = {}
        for n in wf.nodes:
            if n.kind is NodeKind.MAP and n.items and not n.items.startswith("inputs."):
                src, field = n.items.split(".", 1)
                self.fields.setdefault(src, []).append(field)

    def container(self, args: list[str]) -> dict[str, Any]:
        # The chart's ConfigMap holds ALAS_STORE__* (kind, endpoint, bucket); its Secret the S3 keys.
        env = [{"name": var, "valueFrom": {"secretKeyRef": {"name": self.o.store_secret, "key": key}}}
               for var, key in (("AWS_ACCESS_KEY_ID", "accessKey"), ("AWS_SECRET_ACCESS_KEY", "secretKey"))]
        env.append({"name": "HOME", "value": "/tmp"})
        return {"image": self.o.image, "command": ["alas"], "args": args, "env": env,
                "envFrom": [{"configMapRef": {"name": self.o.store_config}}],
                "resources": {"requests": {"cpu": "100m", "memory": "256Mi"}}, "securityContext": _SECURITY,
                "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}]}

    def step_args(self, n: Node, kind: str, data_deps: list[str]) -> list[str]:
        # --scope: the workflow object; output records are keyed by it, so a retried pod finds its own
        # earlier result while a later workflow on the same run (a repair) starts fresh.
        args = ["step", kind, "--node", n.id, "--run-id", self.o.run_id, "--scope", "{{workflow.name}}",
                "--outputs", nm.OUTPUTS, "--params", "{{inputs.parameters.params}}"]
        for name in self.inputs:
            args += ["--run-input", f"{name}={{{{workflow.parameters.{name}}}}}"]
        for d in data_deps:
            args += ["--input", f"{d}={{{{inputs.parameters.in-{nm.dns(d)}}}}}"]
        if n.join is Join.ANY_OF:
            args += ["--candidates", ",".join(dict.fromkeys(s for s, _ in self.deps[n.id]))]
        if n.kind is NodeKind.MAP:
            args += ["--item", "{{inputs.parameters.item}}"]
        if n.kind is NodeKind.CHOICE:
            args += ["--choices", "{{inputs.parameters.choices}}"]
        if n.kind is NodeKind.PARALLEL:
            args += ["--branches", ",".join(n.branches)]
        if n.loop is not None:
            args += ["--loop-until", "{{inputs.parameters.loop-until}}", "--max-iters",
                     "{{inputs.parameters.max-iters}}"]
            guard = self.wf.policy_for(n).loop_guard
            if guard is not None and guard.deadline is not None:
                args += ["--loop-deadline", "{{inputs.parameters.loop-deadline}}"]
        if n.id in self.comp_ids:
            # Run on its own, a compensation template undoes what this workflow committed in these nodes.
            args += ["--compensates", ",".join(x.id for x in self.wf.nodes if self.wf.compensation_of(x) == n.id)]
        policy = self.wf.policy_for(n)
        if policy.idempotency is not None:
            args += ["--idempotency-key", self.memo_key(n, policy)]
        if n.output is not None:
            args += ["--output-contract", dumps(n.output)]  # the step refuses output that breaks it
        if n.repair is not None:
            # The escalation ladder after Argo's retries: the step runs the patch role, then the replan role.
            args += ["--repair", dumps(n.repair.to_json())]
        return args

    def memo_key(self, n: Node, policy: Policy) -> str:
        assert policy.idempotency is not None
        return nm.key_to_argo(policy.idempotency.key, node_id=n.id, run=self.o.run_id,
                              deps=_data_deps(n, self.deps[n.id]), has_item=n.kind is NodeKind.MAP)

    def in_params(self, n: Node, data_deps: list[str]) -> list[dict[str, Any]]:
        params: list[dict[str, Any]] = [{"name": "params", "value": dumps(n.params)}]
        if n.kind is NodeKind.CHOICE:
            params.append({"name": "choices", "value": dumps(
                {"choices": [b.to_json() for b in n.choices], "default": n.default})})
        if n.loop is not None:
            params.append({"name": "loop-until", "value": dumps(n.loop.until.to_json())})
            guard = self.wf.policy_for(n).loop_guard
            params.append({"name": "max-iters", "value": str(guard.max_iters if guard else 1)})
            if guard is not None and guard.deadline is not None:
                params.append({"name": "loop-deadline", "value": nm.format_duration(guard.deadline)})
        params += [{"name": f"in-{nm.dns(d)}"} for d in data_deps]
        return params

    def annotations(self, n: Node, *, policy: bool) -> dict[str, str]:
        ann = {nm.ANN_NODE: n.id, nm.ANN_KIND: str(n.kind)}
        if policy and n.policy_ref is not None:
            ann[nm.ANN_POLICY] = n.policy_ref
        return ann

    def leaf(self, n: Node, name: str, kind: str, data_deps: list[str], ann: dict[str, str]) -> dict[str, Any]:
        """A container template carrying the node's policy."""
        outputs = [{"name": "key", "valueFrom": {"path": f"{nm.OUTPUTS}/key"}}]
        outputs += [{"name": f, "valueFrom": {"path": f"{nm.OUTPUTS}/{f}"}} for f in self.fields.get(n.id, [])]
        # Workflow outputs (meta.argo.outputs: {node: [name]}), e.g. the `summary` the operator mirrors.
        outputs += [{"name": f, "globalName": f, "valueFrom": {"path": f"{nm.OUTPUTS}/{f}"}}
                    for f in (self.wf.meta.get("argo") or {}).get("outputs", {}).get(n.id, [])]
        if n.kind is NodeKind.CHOICE:
            outputs.append({"name": "branch", "valueFrom": {"path": f"{nm.OUTPUTS}/branch"}})
        inputs = self.in_params(n, data_deps)
        if n.kind is NodeKind.MAP:
            inputs.insert(0, {"name": "item"})
        t: dict[str, Any] = {"name": name, "metadata": {"annotations": ann}, "inputs": {"parameters": inputs},
                             "outputs": {"parameters": outputs},
                             "container": self.container(self.step_args(n, kind, data_deps))}
        policy = self.wf.policy_for(n)
        retry = _retry(policy)
        if retry is not None:
            t["retryStrategy"] = retry
        if policy.timeout is not None:
            if float(policy.timeout).is_integer():
                t["activeDeadlineSeconds"] = int(policy.timeout)
            else:
                t["timeout"] = nm.format_duration(policy.timeout)
        if policy.idempotency is not None and self.o.memo_cache is not None:
            # Argo requires a maxAge; the log's idempotency records (checked by the step) never expire.
            t["memoize"] = {"key": self.memo_key(n, policy), "maxAge": "720h",
                            "cache": {"configMap": {"name": self.o.memo_cache}}}
        return t

    def templates_of(self, n: Node) -> list[dict[str, Any]]:
        data_deps = _data_deps(n, self.deps[n.id])
        name = nm.dns(n.id)
        if n.kind is NodeKind.MAP:
            item = f"{name}-item"
            args = [{"name": "item", "value": "{{item}}"}, {"name": "params", "value": "{{inputs.parameters.params}}"}]
            args += [{"name": f"in-{nm.dns(d)}", "value": f"{{{{inputs.parameters.in-{nm.dns(d)}}}}}"}
                     for d in data_deps]
            wrapper: dict[str, Any] = {
                "name": name, "metadata": {"annotations": self.annotations(n, policy=False)},
                "inputs": {"parameters": [{"name": "items"}, *self.in_params(n, data_deps)]},
                # Argo (v3.6.5, seen on a real controller) aggregates a fanned-out task's outputs into a JSON
                # list only where a task's arguments name them; in the DAG's own outputs they come out as "[]".
                # So a pod-less collect step takes the list as an argument and hands it back as its output.
                "outputs": {"parameters": [{"name": "key", "valueFrom": {
                    "parameter": f"{{{{tasks.{nm.COLLECT}.outputs.parameters.keys}}}}"}}]},
                "dag": {"tasks": [{"name": "item", "template": item, "withParam": "{{inputs.parameters.items}}",
                                   "arguments": {"parameters": args}},
                                  {"name": nm.COLLECT, "template": nm.COLLECT, "depends": "item",
                                   "arguments": {"parameters": [
                                       {"name": "keys", "value": "{{tasks.item.outputs.parameters.key}}"}]}}]}}
            if n.max_concurrency is not None:
                wrapper["parallelism"] = n.max_concurrency
            ann = {nm.ANN_ITEM_OF: n.id, **({nm.ANN_POLICY: n.policy_ref} if n.policy_ref else {})}
            return [wrapper, self.leaf(n, item, nm.dns(n.role or "map"), data_deps, ann)]
        kind = {NodeKind.CHOICE: "choose", NodeKind.PARALLEL: "gather"}.get(n.kind, nm.dns(n.role or "task"))
        ann = self.annotations(n, policy=True)
        if n.id in self.comp_ids:
            ann[nm.ANN_COMPENSATES] = ",".join(x.id for x in self.wf.nodes if self.wf.compensation_of(x) == n.id)
        return [self.leaf(n, name, kind, data_deps, ann)]

    def task(self, n: Node) -> dict[str, Any]:
        deps = self.deps[n.id]
        op = " || " if n.join is Join.ANY_OF else " && "
        terms = []
        for src, via in deps:
            s = nm.dns(src)
            terms.append(f"{s}.Failed" if via is Via.CATCH else f"{s}.Succeeded" if n.join is Join.ANY_OF else s)
        t: dict[str, Any] = {"name": nm.dns(n.id), "template": nm.dns(n.id)}
        if terms:
            t["depends"] = op.join(dict.fromkeys(terms))
        whens = [f"'{{{{tasks.{nm.dns(s)}.outputs.parameters.branch}}}}' == '{n.id}'" for s, via in deps
                 if via is Via.CHOICE]
        if whens:
            t["when"] = " || ".join(whens)
        args = [{"name": f"in-{nm.dns(d)}", "value": f"{{{{tasks.{nm.dns(d)}.outputs.parameters.key}}}}"}
                for d in _data_deps(n, deps)]
        if n.kind is NodeKind.MAP and n.items:
            root, rest = n.items.split(".", 1)
            src = (f"{{{{workflow.parameters.{rest}}}}}" if root == "inputs"
                   else f"{{{{tasks.{nm.dns(root)}.outputs.parameters.{rest}}}}}")
            args.insert(0, {"name": "items", "value": src})
        if args:
            t["arguments"] = {"parameters": args}
        policy = self.wf.policy_for(n)
        if policy.catch or policy.on_failure is OnFailure.SKIP:
            t["continueOn"] = {"failed": True}
        return t

    def exit_handler(self) -> list[dict[str, Any]]:
        comps = {n.id: {"node": c, "role": self.wf.node(c).role, "params": self.wf.node(c).params}
                 for n in self.wf.nodes if (c := self.wf.compensation_of(n)) is not None}
        if not comps:
            return []
        args = ["step", nm.COMPENSATE, "--run-id", self.o.run_id, "--scope", "{{workflow.name}}",
                "--outputs", nm.OUTPUTS,
                "--compensations", "{{inputs.parameters.compensations}}", "--status", "{{workflow.status}}"]
        return [{"name": nm.EXIT_HANDLER, "dag": {"tasks": [{
                    "name": nm.COMPENSATE, "template": nm.COMPENSATE, "when": "{{workflow.status}} != Succeeded",
                    "arguments": {"parameters": [{"name": "compensations", "value": dumps(comps)}]}}]}},
                {"name": nm.COMPENSATE, "inputs": {"parameters": [{"name": "compensations"}]},
                 "outputs": {"parameters": [{"name": "key", "valueFrom": {"path": f"{nm.OUTPUTS}/key"}}]},
                 "retryStrategy": {"limit": "3", "retryPolicy": "Always", "backoff": {"duration": "2s", "factor": 2},
                                   "expression": "asInt(lastRetry.exitCode) == 75"},
                 "container": self.container(args)}]

    @staticmethod
    def collect_template() -> dict[str, Any]:
        """The map's collect step: no pod (its one step never runs: a template needs a body), its output is its
        input, the list of the items' keys."""
        return {"name": nm.COLLECT, "inputs": {"parameters": [{"name": "keys"}]},
                "outputs": {"parameters": [{"name": "keys", "valueFrom": {"expression": "inputs.parameters.keys"}}]},
                "steps": [[{"name": "never", "template": nm.COLLECT, "when": "false",
                            "arguments": {"parameters": [{"name": "keys", "value": "[]"}]}}]]}

    def document(self) -> dict[str, Any]:
        wf = self.wf
        scheduled = [n for n in wf.nodes if n.id not in self.comp_ids]
        templates: list[dict[str, Any]] = [{"name": nm.MAIN, "dag": {"tasks": [self.task(n) for n in scheduled]}}]
        for n in wf.nodes:
            templates += self.templates_of(n)
        if any(n.kind is NodeKind.MAP for n in wf.nodes):
            templates.append(self.collect_template())
        exit_templates = self.exit_handler()
        templates += exit_templates
        meta: dict[str, Any] = {"labels": {nm.LABEL_WORKFLOW: wf.name, nm.LABEL_VERSION: str(wf.version)}}
        if self.o.kind == "Workflow":
            meta["generateName"] = f"{wf.name}-"
        else:
            meta["name"] = wf.name
        if self.o.namespace:
            meta["namespace"] = self.o.namespace
        spec: dict[str, Any] = {
            "entrypoint": nm.MAIN, "serviceAccountName": self.o.service_account,
            "securityContext": pod_security(self.o.run_as_user), "podSpecPatch": EXECUTOR_PATCH,
            "podGC": {"strategy": self.o.pod_gc},
            "ttlStrategy": {"secondsAfterSuccess": self.o.ttl_after_success,
                            "secondsAfterFailure": self.o.ttl_after_failure},
            "volumes": [{"name": "scratch", "emptyDir": {}}], "templates": templates}
        if self.inputs:
            spec["arguments"] = {"parameters": [{"name": k, "value": str(v)} for k, v in self.inputs.items()]}
        if exit_templates:
            spec["onExit"] = nm.EXIT_HANDLER
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": self.o.kind, "metadata": meta, "spec": spec}
