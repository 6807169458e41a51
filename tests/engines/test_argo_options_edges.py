"""Edges of alas_argo.engines.argo_options left open by mutation testing: ``to_argo`` always hands ArgoOptions
its kind, ServiceAccount and run id, so the class's own defaults (the names a Helm release called ``alas``
creates, as its docstring promises, and the Argo workflow's name as the log's run id) were never read; and a
kind that is neither Workflow nor WorkflowTemplate is refused with a message naming it."""

from __future__ import annotations

import pytest

from alas_argo.engines.argo_options import ArgoOptions, container


def test_the_defaults_are_the_names_a_release_called_alas_creates() -> None:
    opts = ArgoOptions(image="alas:test")
    assert (opts.image, opts.namespace, opts.kind) == ("alas:test", None, "Workflow")
    assert (opts.service_account, opts.store_config, opts.store_secret) == (
        "alas-workflow", "alas-store", "alas-s3-credentials")
    assert (opts.memo_cache, opts.run_id) == (None, "{{workflow.name}}")
    assert (opts.run_as_user, opts.pod_gc) == (10001, "OnPodSuccess")
    assert (opts.ttl_after_success, opts.ttl_after_failure) == (86_400, 604_800)


def test_a_workflow_template_is_a_kind() -> None:
    assert ArgoOptions(image="alas:test", kind="WorkflowTemplate").kind == "WorkflowTemplate"


@pytest.mark.parametrize("kind", ["CronWorkflow", "workflow", ""])
def test_another_kind_is_refused_naming_it(kind: str) -> None:
    with pytest.raises(ValueError) as refused:
        ArgoOptions(image="alas:test", kind=kind)
    assert str(refused.value) == f"kind must be Workflow or WorkflowTemplate, not {kind!r}"


def test_the_container_reads_the_store_from_the_options_names() -> None:
    """A release with other object names: the container takes them from the options, not the defaults."""
    c = container(ArgoOptions(image="reg/alas:9", store_config="cfg-b", store_secret="sec-b"), ["step", "x"])
    assert c["image"] == "reg/alas:9" and c["command"] == ["alas"] and c["args"] == ["step", "x"]
    assert c["envFrom"] == [{"configMapRef": {"name": "cfg-b"}}]
    assert [e["valueFrom"]["secretKeyRef"] for e in c["env"] if "valueFrom" in e] == [
        {"name": "sec-b", "key": "accessKey"}, {"name": "sec-b", "key": "secretKey"}]
