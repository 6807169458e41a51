"""Argo -> IR: read a Workflow / WorkflowTemplate document written by :func:`~alas_argo.engines.argo.to_argo`
back into the IR.

:func:`read_native` reads only what Argo itself says (DAG ``depends``, ``withParam`` sources, template
``parallelism``, ``retryStrategy``, deadlines, ``memoize`` or the step's idempotency key, step arguments, the
``onExit`` handler);
:func:`from_argo` then applies the annotations the compiler left for what Argo only approximates.
"""

from __future__ import annotations

import re
from typing import Any

from alas_argo.engines import argo_ladder as ladder
from alas_argo.engines import argo_names as nm
from alas_argo.engines.extras import apply_extras, decoded, loads, normalized
from alas_argo.errors import InputError
from alas_argo.ir import Node, Policy, Workflow

__all__ = ["from_argo", "read_native"]

_TERM = re.compile(r"^([\w-]+)(?:\.(Succeeded|Failed))?\Z")
_TASK_PARAM = re.compile(r"^\{\{tasks\.([\w-]+)\.outputs\.parameters\.([\w-]+)\}\}\Z")
_WF_PARAM = re.compile(r"^\{\{workflow\.parameters\.([\w-]+)\}\}\Z")


def _params(t: dict[str, Any]) -> dict[str, Any]:
    return {p["name"]: p.get("value") for p in (t.get("inputs") or {}).get("parameters") or []}


def _args(task: dict[str, Any]) -> dict[str, Any]:
    return {p["name"]: p.get("value") for p in (task.get("arguments") or {}).get("parameters") or []}


def _flag(args: list[str], flag: str) -> str | None:
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None


def _depends(task: dict[str, Any], ladders: dict[str, list[str]] | None = None) -> tuple[list[tuple[str, str]], bool]:
    """[(task name, state)] of a ``depends`` expression and whether it is an or (any_of); a repair ladder's terms
    (``ladders``: node task -> its later rungs) read as the node's."""
    expr = ladder.collapse(task.get("depends") or "", ladders or {})
    if not expr:
        return [], False
    any_of = "||" in expr
    out = []
    for term in re.split(r"\s*(?:&&|\|\|)\s*", expr.strip()):
        match = _TERM.match(term)
        if match is None:
            raise InputError(f"unsupported depends term {term!r}", where=f"task {task.get('name')}")
        out.append((match.group(1), match.group(2) or "Succeeded"))
    return out, any_of


_ALIVE = re.compile(r"'\{\{tasks\.[\w-]+\.status\}\}' != 'Failed'(?: && )?")


def _unbridged(task: dict[str, Any], bridges: dict[str, str]) -> dict[str, Any]:
    """``task`` as it reads without the tasks after caught nodes: each ``<x>-ended`` term written back as ``x``,
    and the ``when`` terms it adds (``'{{tasks.x.status}}' != 'Failed'``) dropped."""
    if not bridges:
        return task
    out = dict(task)
    if out.get("depends"):
        out["depends"] = re.sub(r"(?<![\w-])([\w-]+)(?![\w.-])",
                                lambda m: bridges.get(m.group(1), m.group(1)), out["depends"])
    if out.get("when"):
        when = _ALIVE.sub("", out["when"]).strip()
        if when.startswith("(") and when.endswith(")") and when.count("(") == 1:
            when = when[1:-1]
        if when:
            out["when"] = when
        else:
            del out["when"]
    return out


def _args_of(t: dict[str, Any] | None) -> list[str]:
    return list(((t or {}).get("container") or {}).get("args") or [])


def _duration(value: Any, where: str) -> float:
    """A Go duration of a hand-edited document, or an InputError naming where it is (not a bare ValueError)."""
    try:
        return nm.parse_duration(value)
    except ValueError as e:
        raise InputError(str(e), where=where) from None


def _retry(t: dict[str, Any]) -> dict[str, Any]:
    rs = t.get("retryStrategy")
    if rs is None:
        return {"maxAttempts": 1}
    where = f"template {t.get('name')}"
    if rs.get("limit") is None:  # Argo then retries until the step succeeds; the IR's attempts are bounded
        raise InputError("a retryStrategy without a limit retries without bound", where=where)
    if rs.get("backoff") is not None and not rs["backoff"].get("duration"):
        # Argo fails such a node ("no base duration specified for retryStrategy") instead of retrying it.
        raise InputError("a retryStrategy backoff without a duration", where=where)
    b = rs.get("backoff") or {}
    factor = float(b.get("factor", 1))
    initial = _duration(b.get("duration", 0), f"{where} retryStrategy.backoff.duration")  # no backoff: at once
    backoff: dict[str, Any] = {"kind": "exponential" if factor != 1.0 else "fixed", "initial": initial,
                               "factor": factor if factor != 1.0 else 2.0, "jitter": 0.0}
    if "cap" in b:
        backoff["max"] = _duration(b["cap"], f"{where} retryStrategy.backoff.cap")
    return {"maxAttempts": int(rs["limit"]) + 1, "backoff": backoff,
            "retryOn": nm.retry_names(rs.get("retryPolicy"), rs.get("expression"))}


def read_native(doc: dict[str, Any]) -> dict[str, Any]:
    """The IR document Argo's own fields describe (annotated extras not applied).

    Raises:
        InputError: The document is not one this compiler writes (no entrypoint, no node templates, ...).
    """
    if not isinstance(doc, dict) or doc.get("kind") not in ("Workflow", "WorkflowTemplate"):
        raise InputError("not an Argo Workflow or WorkflowTemplate document", where="kind")
    meta, spec = doc.get("metadata") or {}, doc.get("spec") or {}
    templates = {t["name"]: t for t in spec.get("templates") or []}
    main = templates.get(spec.get("entrypoint", ""))
    if main is None or "dag" not in main:
        raise InputError(f"entrypoint {spec.get('entrypoint')!r} is not a DAG template", where="spec.entrypoint")
    labels = meta.get("labels") or {}
    ann_of = {n: (t.get("metadata") or {}).get("annotations") or {} for n, t in templates.items()}
    id_of = {n: a[nm.ANN_NODE] for n, a in ann_of.items() if nm.ANN_NODE in a}
    # The later rungs of a repair ladder are steps of their node, not nodes: read them into its repair spec.
    rung_of = {n: a[nm.ANN_RUNG_OF] for n, a in ann_of.items() if nm.ANN_RUNG_OF in a}
    task_of = {i: n for n, i in id_of.items()}
    ladders: dict[str, list[str]] = {}
    for rung, node_id in rung_of.items():
        ladders.setdefault(task_of.get(node_id, nm.dns(node_id)), []).append(rung)
    main_tasks = {t["name"]: t for t in main["dag"].get("tasks") or []}
    # The task after a caught node (argo_templates.ended) is a step of the graph, not a node: its consumers read
    # as the caught node's, and the ``when`` it adds to them is no gate.
    bridges = {n: _depends(t, ladders)[0][0][0] for n, t in main_tasks.items()
               if t.get("template") == nm.ENDED and t.get("depends")}
    tasks = {n: _unbridged(t, bridges) for n, t in main_tasks.items() if n not in rung_of and n not in bridges}
    # Compensations are what Argo runs on exit, so they are read from the template ``onExit`` names: a handler
    # template nothing points at never runs, and a document that only carries one compensates nothing.
    comps: dict[str, Any] = {}
    handler = templates.get(spec.get("onExit", ""))
    for task in ((handler or {}).get("dag") or {}).get("tasks") or []:
        comps.update(loads(_args(task).get("compensations")) or {})
    nodes: list[dict[str, Any]] = []
    policies: dict[str, Any] = {}
    catch_of: dict[str, list[dict[str, Any]]] = {}
    for tname, task in tasks.items():
        for src, state in _depends(task, ladders)[0]:
            if state == "Failed":
                catch_of.setdefault(src, []).append({"errors": ["*"], "next": id_of.get(tname, tname)})
    for name, t in templates.items():
        if name not in id_of:
            continue
        ann = ann_of[name]
        node: dict[str, Any] = {"id": id_of[name], "kind": ann.get(nm.ANN_KIND, "task")}
        leaf = templates.get(f"{name}-item", t) if node["kind"] == "map" else t
        params = _params(t)
        args = (leaf.get("container") or {}).get("args") or []
        if node["kind"] in ("task", "map"):
            node["role"] = args[1] if len(args) > 1 else None
        node["params"] = loads(params.get("params"), where=f"template {name} input params") or {}
        task = tasks.get(name, {})
        _, any_of = _depends(task, ladders)
        node["join"] = "any_of" if any_of else "all_of"
        if node["kind"] == "choice":
            choices = loads(params.get("choices")) or {}
            node["choices"] = choices.get("choices", [])
            if choices.get("default") is not None:
                node["default"] = choices["default"]
        if node["kind"] == "parallel":
            node["branches"] = [b for b in (_flag(args, "--branches") or "").split(",") if b]
        if node["kind"] == "map":
            src = str(_args(task).get("items", ""))
            if (tm := _TASK_PARAM.match(src)) is not None:
                node["items"] = f"{id_of.get(tm.group(1), tm.group(1))}.{tm.group(2)}"
            elif (wm := _WF_PARAM.match(src)) is not None:
                node["items"] = f"inputs.{wm.group(1)}"
            if "parallelism" in t:
                node["maxConcurrency"] = int(t["parallelism"])
        if (contract := _flag(args, "--output-contract")) is not None:
            node["output"] = loads(contract)
        rungs = ladders.get(name, [])
        # A map item climbs the ladder in its pod (the spec on its own args); a ladder's rungs carry it.
        repair = _flag(args, "--repair") or _flag(_args_of(templates.get(next(iter(rungs), ""))), "--repair")
        if repair is not None:
            node["repair"] = loads(repair)
        if "loop-until" in params:
            node["loop"] = {"until": loads(params["loop-until"])}
        gate = _gate(str(task.get("when", "")).rsplit(" && ", 1)[-1], id_of, {
            n for n, a in ann_of.items() if a.get(nm.ANN_KIND) == "choice"})
        if gate is not None:
            node["when"] = gate
        if node["id"] in comps:
            node["compensation"] = comps[node["id"]]["node"]
        pref = (ann_of.get(leaf["name"]) or {}).get(nm.ANN_POLICY)
        if pref is not None:
            node["policyRef"] = pref
            if pref not in policies:
                # A ladder's catch routes hang off its last rung's failure, which ``_depends`` reads as the node's.
                policies[pref] = _policy(leaf, params, catch_of.get(name, []), args, node["id"])
        nodes.append(node)
    node_ids = {n["id"]: n for n in nodes}
    edges = []
    for tname, task in tasks.items():
        target = node_ids.get(id_of.get(tname, tname), {})
        for src, state in _depends(task, ladders)[0]:
            sid = id_of.get(src, src)
            snode = node_ids.get(sid, {})
            implied = (snode.get("kind") == "choice" and target.get("id") in
                       [b["next"] for b in snode.get("choices", [])] + [snode.get("default")]) or \
                (target.get("kind") == "parallel" and sid in target.get("branches", []))
            if state != "Failed" and not implied:
                edges.append({"source": sid, "target": target.get("id", tname)})
    nodes = [normalized(Node, n) for n in nodes]
    policies = {k: normalized(Policy, p) for k, p in policies.items()}
    name = labels.get(nm.LABEL_WORKFLOW) or meta.get("name") or str(meta.get("generateName", "")).rstrip("-")
    out: dict[str, Any] = {"name": name, "version": int(labels.get(nm.LABEL_VERSION, 1)), "nodes": nodes,
                           "edges": edges, "policies": policies, "schemas": {}, "logSchemas": {}, "meta": {}}
    declared = (spec.get("arguments") or {}).get("parameters") or []
    inputs = {p["name"]: p.get("value") for p in declared}
    if inputs:
        out["meta"]["inputs"] = inputs
    enums = {p["name"]: list(p["enum"]) for p in declared if "enum" in p}
    if enums:
        out["meta"]["input_enums"] = enums
    return out


_GATE = re.compile(r"^(!\()?'?\{\{(?:workflow\.parameters|tasks\.([\w-]+)\.outputs\.parameters)\.([\w-]+)\}\}'? "
                   r"(==|!=|<=|>=|<|>) ('[^']*'|-?\d+(?:\.\d+)?)\)?$")
_GATE_OPS = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def _gate(when: str, id_of: dict[str, str], choices: set[str]) -> dict[str, Any] | None:
    """The IR gate a task's ``when`` says (what :func:`~alas_argo.engines.argo_templates.gate_expression`
    writes), or None for anything else (a choice target's ``when`` is read from its choice node)."""
    m = _GATE.match(when)
    if m is None:
        return None
    negate, task, field, op, raw = m.groups()
    if task in choices:
        return None
    value: Any = raw[1:-1] if raw.startswith("'") else (float(raw) if "." in raw else int(raw))
    root = "inputs" if task is None else id_of.get(task, task)
    return {"path": f"{root}.{field}", "op": _GATE_OPS[op], "value": value, "negate": negate is not None}


def _policy(leaf: dict[str, Any], params: dict[str, Any], catch: list[dict[str, Any]], args: list[str],
            node_id: str) -> dict[str, Any]:
    policy: dict[str, Any] = {"retry": _retry(leaf), "catch": catch, "onFailure": "rollback"}
    if "activeDeadlineSeconds" in leaf:
        policy["timeout"] = float(leaf["activeDeadlineSeconds"])
    elif "timeout" in leaf:
        policy["timeout"] = _duration(leaf["timeout"], f"template {leaf.get('name')} timeout")
    key = leaf["memoize"]["key"] if "memoize" in leaf else _flag(args, "--idempotency-key")
    if key is not None:
        run = _flag(args, "--run-id") or "{{workflow.name}}"
        policy["idempotency"] = {"key": nm.key_from_argo(key, node_id=node_id, run=run)}
    if "max-iters" in params:
        guard: dict[str, Any] = {"maxIters": int(params["max-iters"])}
        if "loop-deadline" in params:
            guard["deadline"] = _duration(params["loop-deadline"], f"template {leaf.get('name')} --loop-deadline")
        policy["loopGuard"] = guard
    return policy


def from_argo(doc: dict[str, Any]) -> Workflow:
    """The IR workflow a document written by ``to_argo`` encodes (lossless for those documents).

    Raises:
        InputError: The document is not an Argo workflow of this shape, or the IR it encodes is invalid.
    """
    native = read_native(doc)
    spec = doc.get("spec") or {}
    meta_ann = (doc.get("metadata") or {}).get("annotations") or {}
    wf_extras = loads(meta_ann.get(nm.ANN_WF_EXTRAS), where=f"metadata.annotations[{nm.ANN_WF_EXTRAS}]") or {}
    policy_extras: dict[str, Any] = dict(wf_extras.pop("policies", {}) or {})
    node_extras: dict[str, Any] = {}
    for t in spec.get("templates") or []:
        ann = (t.get("metadata") or {}).get("annotations") or {}
        if nm.ANN_NODE_EXTRAS in ann:
            node_extras[ann[nm.ANN_NODE]] = loads(ann[nm.ANN_NODE_EXTRAS],
                                                  where=f"template {t.get('name')} {nm.ANN_NODE_EXTRAS}")
        if nm.ANN_POLICY_EXTRAS in ann:
            policy_extras[ann[nm.ANN_POLICY]] = loads(ann[nm.ANN_POLICY_EXTRAS],
                                                      where=f"template {t.get('name')} {nm.ANN_POLICY_EXTRAS}")
    doc_ir = apply_extras({k: v for k, v in native.items() if k not in ("nodes", "policies")}, wf_extras)
    doc_ir["nodes"] = [apply_extras(n, node_extras.get(n["id"])) for n in native["nodes"]]
    doc_ir["policies"] = apply_extras(native["policies"], policy_extras or None)
    return decoded(doc_ir, what="the Argo document", where=doc_ir.get("name", "workflow"))
