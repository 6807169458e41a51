"""The chart as a real Helm renders it (`helm template`, tests/charts/helm_cli.py), object by object.

Every object of every variant is validated: Kubernetes objects with kubernetes-validate (strict, 1.31),
CRDs also with the structural-schema lint, WorkflowTemplates with Hera's Argo models, the project's lint
and (where the reference schemas are present) Argo's own CRD schema. Then what issue 14 found: the values
reach every workflow pod, two releases share a namespace, nothing waits on an install hook, Secrets are
stable between renders, every pod passes Pod Security "restricted".
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import hera.workflows.models as m
import kubernetes_validate
import pytest
import yaml

from alas_argo.engines.argo_templates import ArgoOptions
from alas_argo.engines.lint import lint_argo
from tests.argo_schemas import argo_schema_dir, argo_validator
from tests.charts.helm_cli import CHART, SKIP_REASON, HelmFailed, find_helm, helm_template
from tests.operators.crd_structure import lint_crd

HELM = find_helm()
pytestmark = pytest.mark.skipif(HELM is None, reason=SKIP_REASON)
KIND = CHART / "values-kind.yaml"
MONITORING = ["--api-versions", "monitoring.coreos.com/v1"]
CLUSTER_SCOPED = {"ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition"}


def render(tmp: Path, values: dict[str, Any] | None = None, **kw: Any) -> list[dict[str, Any]]:
    assert HELM is not None
    return helm_template(HELM, values, tmp=tmp, **kw)


def objects(docs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind]


def one(docs: list[dict[str, Any]], kind: str, suffix: str = "") -> dict[str, Any]:
    found = [d for d in objects(docs, kind) if d["metadata"]["name"].endswith(suffix)]
    assert len(found) == 1, (kind, suffix, [d["metadata"]["name"] for d in found])
    return found[0]


def container(deployment: dict[str, Any]) -> dict[str, Any]:
    return dict(deployment["spec"]["template"]["spec"]["containers"][0])


# ---- every object of every variant is valid ------------------------------------------------------------

VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "defaults": ({}, {"args": ["--include-crds"]}),
    "kind": ({}, {"values_files": [KIND], "args": MONITORING}),
    "external-s3": ({"minio": {"enabled": False}, "s3": {"endpoint": "https://s3.example.com", "bucket": "plans",
                                                          "createBucket": False}}, {}),
    "no-controller-no-operator": ({"controller": {"enabled": False}, "operator": {"enabled": False},
                                   "s3": {"createBucket": False}}, {}),
    "everything-off": ({"networkPolicy": {"enabled": False}, "dashboards": {"enabled": False},
                        "workflowTemplates": {"enabled": False}, "rbac": {"aggregateToDefaultRoles": False},
                        "monitoring": {"enabled": False}}, {"args": MONITORING}),
    "managed-crds": ({"crds": {"manage": True}}, {"args": ["--skip-crds"]}),
    "monitoring": ({"monitoring": {"labels": {"release": "kps"}}, "dashboards": {"namespace": "monitoring"}},
                   {"args": MONITORING}),
    "custom": ({"image": {"repository": "registry.example.com/team/alas", "tag": "1.2.3", "pullPolicy": "Always"},
                "imagePullSecrets": [{"name": "regcred"}], "securityContext": {"runAsUser": 2000},
                "controller": {"token": "a-stable-token-0123456789"},
                "workflow": {"serviceAccount": "planner", "podGC": {"strategy": "OnWorkflowSuccess"},
                             "ttlStrategy": {"secondsAfterSuccess": 60, "secondsAfterFailure": 120},
                             "mapParallelism": {"alas-bench": 64}},
                "s3": {"credentialsSecret": "my-s3"}}, {"release": "prod", "namespace": "plans"}),
}


def validate(doc: dict[str, Any]) -> None:
    kind = doc["kind"]
    if kind == "WorkflowTemplate":
        again = m.WorkflowTemplate.model_validate(copy.deepcopy(doc)).model_dump(by_alias=True, exclude_none=True,
                                                                                  mode="json")
        assert again == doc, "Hera's Argo models drop or change a field"
        assert [str(p) for p in lint_argo(doc)] == []
        if argo_schema_dir() is not None:
            errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in argo_validator(kind).iter_errors(doc)]
            assert errors == []
    elif doc["apiVersion"].startswith("monitoring.coreos.com/"):
        assert doc["spec"], kind  # no schema for the Prometheus Operator's kinds here; promtool checks the rules
    else:
        kubernetes_validate.validate(doc, "1.31", strict=True)
        if kind == "CustomResourceDefinition":
            assert [str(p) for p in lint_crd(doc)] == []


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_rendered_object_is_valid(variant: str, tmp_path: Path) -> None:
    values, kw = VARIANTS[variant]
    docs = render(tmp_path, values, **kw)
    assert len(docs) >= 5
    for doc in docs:
        try:
            validate(doc)
        except Exception as e:
            raise AssertionError(f"{variant}: {doc['kind']}/{doc['metadata']['name']}: {e}") from e
    names = [(d["kind"], d["metadata"]["name"]) for d in docs]
    assert len(names) == len(set(names)), "two objects with one name"


def test_the_variants_render_what_they_say(tmp_path: Path) -> None:
    kinds = {v: {d["kind"] for d in render(tmp_path, values, **kw)} for v, (values, kw) in VARIANTS.items()}
    assert {"CustomResourceDefinition", "WorkflowTemplate", "ClusterRole"} <= kinds["defaults"]
    assert {"ServiceMonitor", "PrometheusRule"} <= kinds["monitoring"] and "ServiceMonitor" not in kinds["defaults"]
    assert "StatefulSet" not in kinds["external-s3"]
    assert not {"WorkflowTemplate", "NetworkPolicy", "ClusterRole", "ServiceMonitor"} & kinds["everything-off"]
    assert "CustomResourceDefinition" in kinds["managed-crds"]


def test_a_broken_value_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HelmFailed) as refused:
        render(tmp_path, {"securityContext": {"runAsUser": 0}})
    assert "runAsUser" in refused.value.stderr
    with pytest.raises(HelmFailed) as refused:
        render(tmp_path, {"controller": {"enabled": False}})
    assert "s3.createBucket needs controller.enabled" in refused.value.stderr


# ---- issue 14, point 4: the chart's values reach every workflow pod ------------------------------------

def test_values_reach_every_workflow_pod(tmp_path: Path) -> None:
    values, kw = VARIANTS["custom"]
    docs = render(tmp_path, values, **kw)
    image = "registry.example.com/team/alas:1.2.3"
    store = one(docs, "ConfigMap", "-store")["metadata"]["name"]
    assert store == "prod-alas-store"
    assert {d["metadata"]["name"] for d in objects(docs, "Secret")} >= {"my-s3"}
    assert one(docs, "ServiceAccount", "planner")["metadata"]["name"] == "planner"
    templates = objects(docs, "WorkflowTemplate")
    assert sorted(t["metadata"]["name"] for t in templates) == ["prod-alas-bench", "prod-alas-plan",
                                                               "prod-alas-repair"]
    pods = exit_handlers = 0
    for wt in templates:
        spec = wt["spec"]
        where = wt["metadata"]["name"]
        assert spec["serviceAccountName"] == "planner", where
        assert spec["imagePullSecrets"] == [{"name": "regcred"}], where
        assert spec["securityContext"] == {"runAsNonRoot": True, "runAsUser": 2000, "runAsGroup": 2000,
                                           "fsGroup": 2000, "seccompProfile": {"type": "RuntimeDefault"}}, where
        assert spec["podGC"] == {"strategy": "OnWorkflowSuccess"}, where
        assert spec["ttlStrategy"] == {"secondsAfterSuccess": 60, "secondsAfterFailure": 120}, where
        patch = json.loads(spec["podSpecPatch"])  # Argo's own init and wait containers
        assert {c["name"] for c in patch["initContainers"] + patch["containers"]} == {"init", "wait"}
        for t in spec["templates"]:
            for kind in ("container", "script"):
                if kind in t:
                    main = t[kind]
                    assert main["image"] == image and main["imagePullPolicy"] == "Always", (where, t["name"])
                    pods += 1
            for c in [t.get("container"), t.get("script"), *t.get("initContainers", []), *t.get("sidecars", [])]:
                if not c:
                    continue
                refs = [e["valueFrom"]["secretKeyRef"]["name"] for e in c.get("env", []) if "valueFrom" in e]
                assert refs and set(refs) == {"my-s3"}, (where, t["name"])
                assert [f["configMapRef"]["name"] for f in c["envFrom"]] == [store], (where, t["name"])
        if "onExit" in spec:  # the exit handler's pods are among those checked above
            handler = next(t for t in spec["templates"] if t["name"] == spec["onExit"])
            steps = {task["template"] for task in handler["dag"]["tasks"]}
            assert steps and all("container" in t for t in spec["templates"] if t["name"] in steps)
            exit_handlers += 1
    assert pods >= 15 and exit_handlers == 2
    # The fan-outs' width: the bench's cases as set, the plan's job agents as `alas render` wrote them.
    widths = {wt["metadata"]["name"]: [t["parallelism"] for t in wt["spec"]["templates"] if "parallelism" in t]
              for wt in templates}
    assert widths == {"prod-alas-bench": [64], "prod-alas-plan": [8], "prod-alas-repair": []}
    text = json.dumps(templates)
    for default in ("alas:0.1.0", "alas-s3-credentials", "alas-store", "alas-workflow"):
        assert f'"{default}"' not in text, f"{default} survived into the release's WorkflowTemplates"
    operator = container(one(docs, "Deployment", "-operator"))
    assert operator["image"] == image and operator["imagePullPolicy"] == "Always"
    for arg in ("--service-account=planner", "--plan-template=prod-alas-plan", "--bench-template=prod-alas-bench",
                "--pod-gc=OnWorkflowSuccess", "--ttl-after-success=60", "--ttl-after-failure=120"):
        assert arg in operator["args"], arg
    binding = one(docs, "RoleBinding", "-workflow")
    assert binding["subjects"][0]["name"] == "planner"


def test_a_release_called_alas_has_the_names_alas_render_writes(tmp_path: Path) -> None:
    """The goldens name a release called alas (ArgoOptions defaults), so `argo template create` of a golden
    and `argo submit --from workflowtemplate/alas-plan` work against it; the chart only renames in place."""
    docs = render(tmp_path)
    defaults = ArgoOptions(image="x")
    store = one(docs, "ConfigMap", "-store")
    assert store["metadata"]["name"] == defaults.store_config
    assert set(store["data"]) == {"ALAS_STORE__KIND", "ALAS_STORE__S3_ENDPOINT", "ALAS_STORE__S3_BUCKET",
                                  "ALAS_STORE__S3_PREFIX", "ALAS_STORE__S3_REGION"}
    assert defaults.store_secret in {d["metadata"]["name"] for d in objects(docs, "Secret")}
    assert defaults.service_account in {d["metadata"]["name"] for d in objects(docs, "ServiceAccount")}
    assert sorted(t["metadata"]["name"] for t in objects(docs, "WorkflowTemplate")) == [
        "alas-bench", "alas-plan", "alas-repair"]
    helpers = (CHART / "templates" / "_helpers.tpl").read_text()
    assert f'eq .name "{defaults.store_secret}"' in helpers and f'eq .name "{defaults.store_config}"' in helpers


def test_two_releases_share_a_namespace(tmp_path: Path) -> None:
    first = render(tmp_path, release="alas", namespace="shared", args=["--include-crds"])
    second = render(tmp_path, release="second", namespace="shared", args=["--include-crds"])
    names = [{(d["kind"], d["metadata"]["name"]) for d in docs if d["kind"] != "CustomResourceDefinition"}
             for docs in (first, second)]
    assert not names[0] & names[1], sorted(names[0] & names[1])
    # Cluster-scoped roles also stay apart from a release of the same name in another namespace.
    elsewhere = render(tmp_path, release="alas", namespace="other")
    roles = [{d["metadata"]["name"] for d in objects(docs, "ClusterRole")} for docs in (first, elsewhere)]
    assert roles[0] and not roles[0] & roles[1]


# ---- issue 14, point 5: nothing an install waits for depends on a hook ---------------------------------

@pytest.mark.parametrize("variant", ["defaults", "kind", "external-s3"])
def test_install_never_waits_on_a_hook(variant: str, tmp_path: Path) -> None:
    """Helm runs post-install hooks after --wait: a hook that readiness needs deadlocks the install. There
    is no hook but `helm test`'s (which install and upgrade never run); the controller creates the bucket
    itself when the chart creates the store."""
    values, kw = VARIANTS[variant]
    docs = render(tmp_path, values, **kw)
    hooks = {d["metadata"]["name"]: d["metadata"]["annotations"]["helm.sh/hook"] for d in docs
             if "helm.sh/hook" in (d["metadata"].get("annotations") or {})}
    assert hooks == {"alas-smoke": "test"}
    controller = container(one(docs, "Deployment", "-controller"))
    assert ("--create-bucket" in controller["args"]) is (variant != "external-s3")
    assert controller["readinessProbe"]["httpGet"]["path"] == "/readyz"


# ---- issue 14, point 6 ---------------------------------------------------------------------------------

def test_operator_rbac_and_probe(tmp_path: Path) -> None:
    docs = render(tmp_path)
    rules = one(docs, "Role", "-operator")["rules"]
    assert {"apiGroups": ["alas.dev"], "resources": ["planruns/finalizers"], "verbs": ["update"]} in rules
    operator = container(one(docs, "Deployment", "-operator"))
    assert operator["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert any(a.startswith("--metrics-port=") for a in operator["args"])


def test_namespace_editors_may_create_planruns(tmp_path: Path) -> None:
    roles = {d["metadata"]["name"]: d for d in objects(render(tmp_path), "ClusterRole")}
    edit, view = roles["alas-alas-edit"], roles["alas-alas-view"]
    assert edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-admin"] == "true"
    assert "create" in edit["rules"][0]["verbs"] and set(edit["rules"][0]["resources"]) == {"planruns",
                                                                                          "disruptions"}
    assert view["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
    assert set(view["rules"][0]["verbs"]) == {"get", "list", "watch"}


@pytest.mark.timeout(60)  # 5.1 s measured in the whole suite at load 5; loaded runs go past 3x
def test_secrets_are_stable_between_renders(tmp_path: Path) -> None:
    """A GitOps tool renders with `helm template`, where lookup sees nothing: with controller.token set,
    two renders give the same Secrets; without it the token is random (README, "Secrets")."""
    def secrets(values: dict[str, Any] | None) -> dict[str, Any]:
        return {d["metadata"]["name"]: d["stringData"] for d in objects(render(tmp_path, values), "Secret")}

    pinned = {"controller": {"token": "a-stable-token-0123456789"}}
    assert secrets(pinned) == secrets(pinned)
    assert secrets(pinned)["alas-controller-token"] == {"token": "a-stable-token-0123456789"}
    assert secrets(None)["alas-controller-token"] != secrets(None)["alas-controller-token"]
    assert all(d["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
               for d in objects(render(tmp_path), "Secret"))


def test_managed_crds_are_the_crds_of_crds_dir_kept_on_uninstall(tmp_path: Path) -> None:
    managed = objects(render(tmp_path, {"crds": {"manage": True}}, args=["--skip-crds"]), "CustomResourceDefinition")
    shipped = {p.name: yaml.safe_load(p.read_text()) for p in sorted((CHART / "crds").glob("*.yaml"))}
    assert len(managed) == len(shipped) == 2
    for crd in managed:
        original = shipped[f"{crd['metadata']['name']}.yaml"]
        assert crd["spec"] == original["spec"]
        assert crd["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    unmanaged = objects(render(tmp_path, args=["--include-crds"]), "CustomResourceDefinition")
    assert [c["spec"] for c in unmanaged] == [shipped[n]["spec"] for n in sorted(shipped)]


def _restricted_problems(pod: dict[str, Any], where: str) -> list[str]:
    """What Pod Security "restricted" (Kubernetes 1.31) refuses in a pod spec."""
    out = []
    psc = pod.get("securityContext") or {}
    containers = [*pod.get("initContainers", []), *pod["containers"]]
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if pod.get(flag):
            out.append(f"{where}: {flag}")
    for v in pod.get("volumes", []):
        if not set(v) - {"name"} <= {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                                     "persistentVolumeClaim", "projected", "secret"}:
            out.append(f"{where}: volume {v['name']} of a restricted type")
    for c in containers:
        sc, name = c.get("securityContext") or {}, f"{where}/{c['name']}"
        if sc.get("privileged"):
            out.append(f"{name}: privileged")
        if sc.get("allowPrivilegeEscalation") is not False:
            out.append(f"{name}: allowPrivilegeEscalation must be false")
        caps = sc.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or []) or set(caps.get("add") or []) - {"NET_BIND_SERVICE"}:
            out.append(f"{name}: capabilities must drop ALL")
        if sc.get("runAsNonRoot", psc.get("runAsNonRoot")) is not True:
            out.append(f"{name}: runAsNonRoot")
        if sc.get("runAsUser", psc.get("runAsUser")) == 0:
            out.append(f"{name}: runAsUser 0")
        seccomp = (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            out.append(f"{name}: seccompProfile")
        if any(p.get("hostPort") for p in c.get("ports", [])):
            out.append(f"{name}: hostPort")
    return out


def _argo_pod(spec: dict[str, Any], template: dict[str, Any]) -> dict[str, Any]:
    """The pod Argo builds for a container template: its init and wait containers as a stock install makes
    them (no securityContext), the main container, the workflow's pod settings, then podSpecPatch."""
    pod: dict[str, Any] = {"securityContext": spec.get("securityContext"), "volumes": spec.get("volumes", []),
                           "initContainers": [{"name": "init", "image": "argoexec"}],
                           "containers": [{"name": "wait", "image": "argoexec"},
                                          {**template["container"], "name": "main"}]}
    patch = json.loads(spec.get("podSpecPatch") or "{}")
    for field in ("initContainers", "containers"):
        for change in patch.get(field, []):
            target = next(c for c in pod[field] if c["name"] == change["name"])
            target["securityContext"] = {**(target.get("securityContext") or {}), **change["securityContext"]}
    return pod


def test_every_pod_passes_pod_security_restricted(tmp_path: Path) -> None:
    docs = render(tmp_path, values_files=[KIND])
    problems: list[str] = []
    for d in docs:
        if d["kind"] in ("Deployment", "StatefulSet", "Job"):
            problems += _restricted_problems(d["spec"]["template"]["spec"], d["metadata"]["name"])
        if d["kind"] == "Pod":
            problems += _restricted_problems(d["spec"], d["metadata"]["name"])
        if d["kind"] == "WorkflowTemplate":
            for t in d["spec"]["templates"]:
                if "container" in t:
                    problems += _restricted_problems(_argo_pod(d["spec"], t), f"{d['metadata']['name']}/{t['name']}")
    assert problems == []
    bare = copy.deepcopy(one(docs, "WorkflowTemplate", "alas-plan")["spec"])
    del bare["podSpecPatch"]  # what a stock Argo makes of its own containers without the patch
    assert any("wait: allowPrivilegeEscalation" in p for p in _restricted_problems(
        _argo_pod(bare, bare["templates"][1]), "x"))


def _env_values(docs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    found = []
    for doc in docs:
        spec = (doc.get("spec") or {}).get("template", {}).get("spec") or {}
        for c in [*spec.get("containers", []), *spec.get("initContainers", [])]:
            found += [(doc["metadata"]["name"], e["name"], str(e["value"])) for e in c.get("env", []) if "value" in e]
    return found


@pytest.mark.parametrize("variant", ["defaults", "kind"])
def test_numbers_reach_the_pods_as_integers(variant: str, tmp_path: Path) -> None:
    # Helm keeps YAML numbers as float64: 1048576 rendered with `quote` alone is "1.048576e+06", which the
    # controller's settings refused at start (seen on a real cluster: CrashLoopBackOff).
    values, kw = VARIANTS[variant]
    docs = render(tmp_path, values, **kw)
    envs = _env_values(docs)
    assert envs
    floats = [e for e in envs if re.fullmatch(r"-?\d+(\.\d+)?e[+-]\d+", e[2])]
    assert not floats, floats
    body = next(v for _, name, v in envs if name.endswith("MAX_BODY_BYTES"))
    assert body.isdigit()


# ---- `helm test` -----------------------------------------------------------------------------------------

def test_helm_test_runs_alas_smoke_against_this_release(tmp_path: Path) -> None:
    values, kw = VARIANTS["custom"]
    docs = render(tmp_path, values, **kw)
    pod = one(docs, "Pod", "-smoke")
    assert pod["metadata"]["annotations"]["helm.sh/hook"] == "test"
    smoke = pod["spec"]["containers"][0]
    assert smoke["image"] == "registry.example.com/team/alas:1.2.3"
    assert smoke["args"] == ["smoke", "--timeout=60", "--controller=http://prod-alas-controller:8080"]
    assert one(docs, "Service", "-controller")["metadata"]["name"] == "prod-alas-controller"
    env = {e["name"]: e for e in smoke["env"]}
    controller_env = {e["name"]: e for e in container(one(docs, "Deployment", "-controller"))["env"]}
    # The controller's token and every store setting the controller has, from the same places.
    assert env.pop("ALAS_CONTROLLER__TOKEN") == controller_env.pop("ALAS_CONTROLLER__TOKEN")
    controller_env.pop("ALAS_CONTROLLER__MAX_BODY_BYTES")
    assert env == controller_env
    assert env["AWS_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"]["name"] == "my-s3"
    # The network policies let it reach the controller and MinIO, as the workflow pods do.
    smoke_labels = {"app.kubernetes.io/name": "alas", "app.kubernetes.io/instance": "prod",
                    "app.kubernetes.io/component": "smoke"}
    smoke_peer = {"podSelector": {"matchLabels": smoke_labels}}
    for suffix in ("-controller", "-minio"):
        assert smoke_peer in one(docs, "NetworkPolicy", suffix)["spec"]["ingress"][0]["from"], suffix
    assert {k: v for k, v in pod["metadata"]["labels"].items() if k in smoke_labels} == smoke_labels


def test_helm_test_without_a_controller_checks_the_store_and_can_be_turned_off(tmp_path: Path) -> None:
    values, kw = VARIANTS["no-controller-no-operator"]
    smoke = one(render(tmp_path, values, **kw), "Pod", "-smoke")["spec"]["containers"][0]
    assert smoke["args"] == ["smoke", "--timeout=60"]
    assert "ALAS_CONTROLLER__TOKEN" not in {e["name"] for e in smoke["env"]}
    docs = render(tmp_path, {"tests": {"enabled": False}})
    assert objects(docs, "Pod") == []
    for policy in objects(docs, "NetworkPolicy"):
        assert "smoke" not in json.dumps(policy), policy["metadata"]["name"]
