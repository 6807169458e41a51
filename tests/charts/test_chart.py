"""The Helm chart: values schema, `helm lint` (Helm embedded in helm-sdkpy, where it installs), the
plain-YAML parts, and the pieces that must stay in sync with the rest of the repository.

The rendered chart, object by object, is tested with the Helm CLI in test_rendered.py.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "alas"
SCHEMA = json.loads((CHART / "values.schema.json").read_text())
DEFAULTS = yaml.safe_load((CHART / "values.yaml").read_text())


def with_values(**changes: Any) -> dict[str, Any]:
    """The defaults with dotted-path overrides, e.g. with_values(**{"minio.enabled": False})."""
    values = json.loads(json.dumps(DEFAULTS))
    for dotted, value in changes.items():
        *parents, last = dotted.split(".")
        node = values
        for key in parents:
            node = node[key]
        node[last] = value
    return values


def merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Helm's merge of a values file over the defaults (maps merge, everything else replaces)."""
    out = dict(base)
    for key, value in override.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


KIND_VALUES = merged(DEFAULTS, yaml.safe_load((CHART / "values-kind.yaml").read_text()))


# ---- values.schema.json -------------------------------------------------------------------------------

def test_schema_is_valid_and_accepts_the_defaults() -> None:
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    jsonschema.validate(DEFAULTS, SCHEMA)


def test_schema_accepts_the_kind_values() -> None:
    jsonschema.validate(KIND_VALUES, SCHEMA)
    assert KIND_VALUES["controller"]["service"] == {"type": "NodePort", "nodePort": 30080}


def test_kind_node_ports_match_kind_config() -> None:
    kind = yaml.safe_load((ROOT / "kind-config.yaml").read_text())
    mapped = {m["containerPort"]: m["hostPort"] for m in kind["nodes"][0]["extraPortMappings"]}
    assert mapped[KIND_VALUES["controller"]["service"]["nodePort"]] == 8080
    assert mapped[KIND_VALUES["minio"]["service"]["nodePort"]] == 9000
    assert mapped[KIND_VALUES["minio"]["service"]["consoleNodePort"]] == 9001
    assert {2746, 3000, 9090} <= set(mapped.values())  # Argo server, Grafana, Prometheus
    assert all(m["listenAddress"] == "127.0.0.1" for m in kind["nodes"][0]["extraPortMappings"])


@pytest.mark.parametrize("changes", [
    {"minio.enabled": False, "s3.endpoint": "https://s3.example.com"},
    {"controller.createTokenSecret": False, "networkPolicy.enabled": False, "dashboards.enabled": False},
    {"image.tag": "0.1.0@sha256:" + "a" * 64},
    {"monitoring.labels": {"release": "kube-prometheus-stack"}},
    {"workflow.mapParallelism": {"alas-bench": 64, "alas-plan": 16}},
    {"nameOverride": "planner", "fullnameOverride": "shop-7-alas", "dashboards.namespace": "monitoring"},
    {"image.repository": "registry.local:5000/team/alas", "minio.image.repository": "quay.io/minio/minio"},
    {"image.repository": "ghcr.io/alas-argo/alas_x", "minio.storageClassName": "fast.ssd-1"},
    {"imagePullSecrets": [{"name": "regcred.team-a"}]},
])
def test_schema_accepts_sensible_overrides(changes: dict[str, Any]) -> None:
    jsonschema.validate(with_values(**changes), SCHEMA)


@pytest.mark.parametrize("changes", [
    {"securityContext.runAsUser": 0},
    {"controller.port": 70000},
    {"controller.service": {"type": "NodePort", "nodePort": 80}},
    {"networkPolicy.extraIngressFrom": [{}]},
    {"controller.replicas": -1},
    {"controller.resources": {"requests": {"cpu": "lots", "memory": "1Gi"}, "limits": {"cpu": 1, "memory": "1Gi"}}},
    {"operator.resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
    {"minio.image.tag": "latest"},
    {"minio.enabled": False},
    {"s3.endpoint": "s3.example.com"},
    {"s3.bucket": "Bad_Bucket"},
    {"s3.secretKey": "short"},
    {"image.pullPolicy": "Sometimes"},
    {"workflow.serviceAccount": "Not A Name"},
    {"workflow.mapParallelism": {"alas-bnech": 64}},
    {"workflow.mapParallelism": {"alas-bench": 0}},
    {"workflow.mapParallelism": {"alas-bench": "64"}},
    {"monitoring.interval": "soon"},
    {"surprise": True},
    {"controller.surprise": True},
    # Values the templates insert unquoted, as Kubernetes names or image references: a quote, a newline, a
    # leading "-" or a template in them broke the rendered YAML with a parse error naming a template line, not
    # the value (found by fuzzing every leaf of values.yaml through `helm template`).
    {"nameOverride": "a\nb: c"},
    {"nameOverride": "Planner"},
    {"fullnameOverride": "-"},
    {"fullnameOverride": "'q"},
    {"image.repository": '"dq'},
    {"image.repository": "{{ .Release.Name }}"},
    {"image.repository": "alas:0.1.0"},
    {"minio.image.repository": "a b"},
    {"minio.image.tag": '"dq'},
    {"minio.storageClassName": "-"},
    {"minio.storageClassName": "Fast"},
    {"dashboards.namespace": "'q"},
    {"imagePullSecrets": [{"name": ""}]},
    {"imagePullSecrets": [{"name": "A_b"}]},
    {"s3.region": "eu west"},  # the pods would refuse it at start (ALAS_STORE__S3_REGION, botocore's rule)
    {"s3.region": ""},
])
def test_schema_rejects_bad_values(changes: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(with_values(**changes), SCHEMA)


# ---- helm lint with real Helm -------------------------------------------------------------------------

def lint(chart: Path) -> dict[str, Any]:
    helm = pytest.importorskip("helm_sdkpy", reason="helm-sdkpy not installed "
                               "(pip install helm-sdkpy --ignore-requires-python; x86_64 Linux only)")
    config = helm.Configuration(namespace="alas")
    return dict(asyncio.run(helm.Lint(config).run(str(chart))))


def errors(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in result["Messages"] if m["Severity"] >= 2]  # 2 warning, 3 error


def chart_copy(tmp_path: Path, values: dict[str, Any] | None = None) -> Path:
    target = tmp_path / "alas"
    shutil.copytree(CHART, target)
    if values is not None:
        (target / "values.yaml").write_text(yaml.safe_dump(values))
    return target


def test_helm_lint_default_chart() -> None:
    result = lint(CHART)
    assert result["TotalChartsLinted"] == 1
    assert errors(result) == [] and not result["Errors"]


@pytest.mark.parametrize("changes", [
    {"minio.enabled": False, "s3.endpoint": "https://s3.example.com", "s3.createBucket": False},
    {"controller.enabled": False, "operator.enabled": False, "s3.createBucket": False},
    {"networkPolicy.enabled": False, "dashboards.enabled": False, "workflowTemplates.enabled": False},
    {"networkPolicy.metricsNamespaces": [], "imagePullSecrets": [{"name": "regcred"}],
     "dashboards.namespace": "monitoring", "dashboards.labels": {"team": "planning"}},
])
def test_helm_lint_value_variants(tmp_path: Path, changes: dict[str, Any]) -> None:
    result = lint(chart_copy(tmp_path, with_values(**changes)))
    assert errors(result) == [] and not result["Errors"]


def test_helm_lint_kind_values(tmp_path: Path) -> None:
    result = lint(chart_copy(tmp_path, KIND_VALUES))
    assert errors(result) == [] and not result["Errors"]


def test_helm_lint_renders_the_monitoring_objects(tmp_path: Path) -> None:
    """Lint runs without the monitoring CRDs, so the ServiceMonitor / PrometheusRule body is exercised by
    lifting the Capabilities guard in a copy (the guard itself is checked in test_rules_file_feeds_...)."""
    chart = chart_copy(tmp_path, with_values(**{"monitoring.labels": {"release": "kps"}}))
    template = chart / "templates" / "monitoring.yaml"
    text = template.read_text()
    guard = '{{- if and .Values.monitoring.enabled (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") }}'
    assert guard in text
    template.write_text(text.replace(guard, "{{- if .Values.monitoring.enabled }}"))
    result = lint(chart)
    assert errors(result) == [] and not result["Errors"]
    # A broken rules file renders no groups; Helm's lint mode only logs `fail`, so the refusal that a real
    # install or template hits is checked as text.
    assert '{{- fail "files/alas.rules.yaml has no rule groups' in text


def test_helm_lint_enforces_the_values_schema(tmp_path: Path) -> None:
    result = lint(chart_copy(tmp_path, with_values(**{"securityContext.runAsUser": 0})))
    assert result["Errors"], result


def test_helm_lint_catches_a_template_error(tmp_path: Path) -> None:
    chart = chart_copy(tmp_path)
    (chart / "templates" / "broken.yaml").write_text("kind: ConfigMap\nname: {{ .Values.nope.deeper }}\n")
    assert lint(chart)["Errors"]


def test_workflow_templates_pass_argo_expressions_through(tmp_path: Path) -> None:
    """A rendered WorkflowTemplate with Argo expressions goes through the chart as data (were it templated,
    `{{inputs.parameters.instance}}` would be a Helm parse error)."""
    chart = chart_copy(tmp_path)
    (chart / "workflows" / "alas-plan.yaml").write_text(yaml.safe_dump({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "WorkflowTemplate", "metadata": {"name": "alas-plan"},
        "spec": {"entrypoint": "plan", "templates": [{"name": "plan", "inputs": {"parameters": [
            {"name": "instance"}]}, "container": {"image": "alas:0.1.0",
                                                  "args": ["step", "plan", "{{inputs.parameters.instance}}"]}}]}}))
    result = lint(chart)
    assert errors(result) == [] and not result["Errors"]


# ---- plain YAML / JSON parts ------------------------------------------------------------------------------

def test_chart_yaml() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2" and chart["name"] == "alas" and chart["type"] == "application"
    assert re.fullmatch(r"\d+\.\d+\.\d+", chart["version"])


def test_crds_in_the_chart_are_valid() -> None:
    crds = sorted((CHART / "crds").glob("*.yaml"))
    assert len(crds) == 2
    for path in crds:
        kubernetes_validate.validate(yaml.safe_load(path.read_text()), "1.30", strict=True)


def test_dashboards_in_the_chart_are_the_generated_ones() -> None:
    chart_dashboards = sorted(p.name for p in (CHART / "dashboards").glob("*.json"))
    assert chart_dashboards == ["alas-overview.json", "alas-repair.json"]
    for name in chart_dashboards:
        assert (CHART / "dashboards" / name).read_text() == (ROOT / "observability" / "dashboards" / name).read_text()


def test_rules_file_feeds_the_prometheus_rule() -> None:
    rules = yaml.safe_load((CHART / "files" / "alas.rules.yaml").read_text())
    assert {g["name"] for g in rules["groups"]} == {"alas.recording", "alas.recording.pipeline", "alas.alerts"}
    template = (CHART / "templates" / "monitoring.yaml").read_text()
    assert template.startswith('{{- if and .Values.monitoring.enabled (.Capabilities.APIVersions.Has '
                               '"monitoring.coreos.com/v1") }}')
    assert template.rstrip().endswith("{{- end }}")


def helper(name: str) -> str:
    text = (CHART / "templates" / "_helpers.tpl").read_text()
    match = re.search(r'{{- define "' + re.escape(name) + r'" -}}\n(.*?)\n{{- end -}}', text, re.S)
    assert match, name
    return match.group(1)


def test_security_context_helpers_make_a_valid_hardened_pod() -> None:
    """The two securityContext helpers are plain YAML apart from one value: fill it in and validate a Pod."""
    pod_sc = yaml.safe_load(helper("alas.podSecurityContext").replace(
        "{{ .Values.securityContext.runAsUser }}", str(DEFAULTS["securityContext"]["runAsUser"])))
    container_sc = yaml.safe_load(helper("alas.containerSecurityContext"))
    assert pod_sc["runAsNonRoot"] is True and pod_sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container_sc == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "privileged": False, "capabilities": {"drop": ["ALL"]}}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"securityContext": pod_sc, "containers": [
               {"name": "c", "image": "alas:0.1.0", "securityContext": container_sc}]}}
    kubernetes_validate.validate(pod, "1.30", strict=True)


@pytest.mark.parametrize("template", ["controller.yaml", "operator.yaml", "minio.yaml"])
def test_every_workload_is_hardened_and_bounded(template: str) -> None:
    text = (CHART / "templates" / template).read_text()
    assert 'include "alas.containerSecurityContext"' in text
    assert "runAsNonRoot: true" in text or 'include "alas.podSecurityContext"' in text
    assert "resources:" in text
    assert "mountPath: /tmp" in text  # read-only root: scratch space comes from an emptyDir


def test_dashboard_configmaps_carry_the_sidecar_label() -> None:
    text = (CHART / "templates" / "dashboards.yaml").read_text()
    assert 'grafana_dashboard: "1"' in text and '.Files.Glob "dashboards/*.json"' in text


def test_controller_runs_the_documented_command() -> None:
    text = (CHART / "templates" / "controller.yaml").read_text()
    for line in ("- controller", "- --host=0.0.0.0", "- --port={{ .Values.controller.port }}", "- --create-bucket"):
        assert line in text, line
    assert "path: /healthz" in text and "path: /readyz" in text


def test_readme_has_the_quickstart_and_an_honest_verification_section() -> None:
    readme = (CHART / "README.md").read_text()
    for step in ("kind create cluster", "kind-config.yaml", "argo-workflows", "kind load docker-image",
                 "helm install", "argo submit", "Grafana"):
        assert step in readme, step
    section = readme.split("## Verified on a cluster", 1)[1].split("\n## ", 1)[0]
    # The section quotes exactly the versions scripts/cluster pins, and says how to rerun it.
    pinned = dict(line.split("#")[0].strip().split("=", 1)
                  for line in (ROOT / "scripts" / "cluster.d" / "versions.env").read_text().splitlines()
                  if line.strip() and not line.startswith("#"))
    for version in pinned.values():
        assert version in section, version
    assert "scripts/cluster e2e" in section and "Not verified here" in section
