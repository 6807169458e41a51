"""IR -> Argo Workflows: a pure function from a :class:`~alas_argo.ir.Workflow` to a Workflow or
WorkflowTemplate document, checked against Hera's generated Argo models.

Shape of the output (docs/ir-and-engines.md): one DAG template ``main`` with one task per scheduled node; every node
is a template running the one image as ``alas step <role> ...``; a map node is a DAG template whose single
task fans out with ``withParam`` under ``parallelism``; joins become ``depends`` expressions; policies
become ``retryStrategy``, ``activeDeadlineSeconds``/``timeout`` and the step's ``--idempotency-key`` (checked
against the log; Argo ``memoize`` only on request, see :class:`ArgoOptions`); compensations run in the
``onExit`` handler when ``{{workflow.status}} != Succeeded``. Every pod runs as the image's non-root user
under Pod Security "restricted", and ``podGC`` / ``ttlStrategy`` clean up pods and workflows. Steps exchange
log keys only: a plan never travels in a parameter, so the object stays small whatever the instance size.
"""

from __future__ import annotations

from typing import Any

import hera.workflows.models as m

from alas_argo.engines import argo_names as nm
from alas_argo.engines.argo_templates import ArgoOptions, Compiler
from alas_argo.engines.conformance import check_supported
from alas_argo.engines.extras import dumps, json_diff
from alas_argo.errors import ContractError
from alas_argo.ir import NodeKind, Workflow, ensure_valid

__all__ = ["ArgoOptions", "to_argo"]


def _attach_extras(wf: Workflow, doc: dict[str, Any]) -> None:
    from alas_argo.engines.argo_parse import read_native

    native = read_native(doc)
    original = wf.to_json()
    templates = {t["name"]: t for t in doc["spec"]["templates"]}
    by_node = {n["id"]: n for n in native["nodes"]}
    policy_home: dict[str, dict[str, Any]] = {}
    for n in wf.nodes:
        name = nm.dns(n.id)
        extras = json_diff(n.to_json(), by_node.get(n.id, {}))
        if extras is not None:
            templates[name]["metadata"]["annotations"][nm.ANN_NODE_EXTRAS] = dumps(extras)
        if n.policy_ref is not None and n.policy_ref not in policy_home:
            policy_home[n.policy_ref] = templates[f"{name}-item" if n.kind is NodeKind.MAP else name]
    wf_extras: dict[str, Any] = {}
    for pname, pdiff in (json_diff(original.get("policies", {}), native.get("policies", {})) or {}).items():
        if pname in policy_home and isinstance(pdiff, dict):
            policy_home[pname]["metadata"]["annotations"][nm.ANN_POLICY_EXTRAS] = dumps(pdiff)
        else:
            wf_extras.setdefault("policies", {})[pname] = pdiff
    rest = {k: v for k, v in original.items() if k not in ("nodes", "policies")}
    top = json_diff(rest, {k: v for k, v in native.items() if k not in ("nodes", "policies")})
    wf_extras.update(top or {})
    if [n.id for n in wf.nodes] != [n["id"] for n in native["nodes"]]:
        raise ContractError("argo compiler lost the node order", where=wf.name)  # a bug, not bad input
    if wf_extras:
        doc["metadata"]["annotations"] = {nm.ANN_WF_EXTRAS: dumps(wf_extras)}


def to_argo(workflow: Workflow, *, image: str, namespace: str | None = None, kind: str = "Workflow",
            service_account: str = "alas-workflow", run_id: str | None = None) -> dict[str, Any]:
    """Compile ``workflow`` to an Argo ``Workflow`` (or ``WorkflowTemplate``) document.

    Args:
        workflow: A valid IR workflow.
        image: The image every template runs (``alas step ...``).
        namespace: Namespace of the object, or None.
        kind: ``Workflow`` or ``WorkflowTemplate``.
        service_account: ServiceAccount of the pods.
        run_id: Argo expression of the log run id; default: the workflow parameter ``run-id`` when the
            workflow declares that input (``meta.inputs``), else ``{{workflow.name}}``.

    Raises:
        WorkflowError: The workflow is invalid.
        UnsupportedFeature: A node uses a feature Argo cannot express (names the node and the feature).
    """
    from alas_argo.engines.argo_parse import from_argo

    ensure_valid(workflow)
    check_supported("argo", workflow)
    if run_id is None:
        declared = workflow.meta.get("inputs") or {}
        run_id = "{{workflow.parameters.run-id}}" if "run-id" in declared else "{{workflow.name}}"
    opts = ArgoOptions(image=image, namespace=namespace, kind=kind, service_account=service_account, run_id=run_id)
    doc = Compiler(workflow, opts).document()
    _attach_extras(workflow, doc)
    model = (m.Workflow if kind == "Workflow" else m.WorkflowTemplate).model_validate(doc)
    out: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    if from_argo(out) != workflow:
        raise ContractError("argo round trip is not lossless", where=workflow.name)  # a compiler bug
    return out
