"""Validation of a workflow before anything runs: every problem at once, each naming its node.

Checks: unique ids; edges, branches, catch routes, compensations and policy refs resolve; kind-specific
fields are present (role, choices, branches, items); a gate reads the inputs or an ungated ancestor;
contracts are valid JSON Schema; every write/external node has a compensation; every loop has a guard; any_of
joins have at least two candidates; the graph is acyclic; every node is reachable from an entry node.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import jsonschema
from pydantic import ValidationError

from alas_argo.errors import WorkflowError
from alas_argo.ir.node import Join, Node, NodeKind, SideEffect
from alas_argo.ir.policy import OnFailure
from alas_argo.ir.workflow import Workflow

__all__ = ["PLACEHOLDER", "Problem", "contract_problem", "ensure_valid", "parse_workflow", "validate",
           "validate_document"]

#: A placeholder of an idempotency key template: ``{name}`` or ``{a.b.c}``.
PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_PATH = re.compile(r"^[A-Za-z_][\w-]*(\.[\w-]+)*\Z")
_ROOTS = {"inputs", "node", "run"}
#: Node ids that would shadow a root of condition paths, key templates or input documents.
_RESERVED = _ROOTS | {"output", "previous", "item", "index"}


@dataclass(frozen=True)
class Problem:
    """One reason a workflow is invalid; ``node`` is None for workflow-wide problems."""

    code: str
    message: str
    node: str | None = None

    def __str__(self) -> str:
        return f"node {self.node}: {self.message}" if self.node else self.message


def contract_problem(schema: dict[str, Any], what: str) -> str | None:
    """Why ``schema`` cannot serve as a contract (``what`` names it in the message), or None when it can."""
    # jsonschema checks a dialect it does not know by its latest draft (with a warning) and fails on a $schema
    # that is not hashable: either way the contract would not be checked by the rules its author named.
    if "$schema" in schema and (not isinstance(schema["$schema"], str)
                                or jsonschema.validators.validator_for(schema, default=None) is None):
        return f"{what} names no JSON Schema dialect jsonschema knows: $schema {schema['$schema']!r}"
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        return f"{what} is not a valid JSON Schema: {e.message}"
    return None


def _check_schema(schema: dict[str, Any] | None, node: str | None, what: str, out: list[Problem]) -> None:
    if schema is not None and (problem := contract_problem(schema, what)) is not None:
        out.append(Problem("bad_contract", problem, node))


def _check_kind(n: Node, ids: set[str], out: list[Problem]) -> None:
    if n.kind in (NodeKind.TASK, NodeKind.MAP) and not n.role:
        out.append(Problem("missing_role", f"{n.kind} node needs a role", n.id))
    if n.kind is NodeKind.CHOICE:
        if not n.choices:
            out.append(Problem("empty_choice", "choice node has no branches", n.id))
        for b in n.choices:
            if b.next not in ids:
                out.append(Problem("unknown_node", f"choice branch goes to unknown node {b.next!r}", n.id))
            if b.when.path.split(".")[0] not in ids | {"inputs"}:
                out.append(Problem("bad_path", f"condition path {b.when.path!r} must start with 'inputs' "
                                   "or a node id", n.id))
        if n.default is not None and n.default not in ids:
            out.append(Problem("unknown_node", f"choice default goes to unknown node {n.default!r}", n.id))
    elif n.choices or n.default:
        out.append(Problem("misplaced_field", "only choice nodes have choices/default", n.id))
    if n.kind is NodeKind.PARALLEL:
        if not n.branches:
            out.append(Problem("empty_parallel", "parallel node has no branches", n.id))
        for branch in n.branches:
            if branch not in ids:
                out.append(Problem("unknown_node", f"parallel branch {branch!r} does not exist", n.id))
    elif n.branches:
        out.append(Problem("misplaced_field", "only parallel nodes have branches", n.id))
    if n.kind is NodeKind.MAP:
        if not n.items:
            out.append(Problem("missing_items", "map node needs 'items' (the list to fan out over)", n.id))
        elif not _PATH.match(n.items) or n.items.split(".")[0] not in ids | {"inputs"}:
            out.append(Problem("bad_path", f"items path {n.items!r} must be 'inputs.<name>' or "
                               "'<node id>.<field>'", n.id))
    elif n.items:
        out.append(Problem("misplaced_field", "only map nodes have items", n.id))
    if n.loop is not None:
        if n.kind is not NodeKind.TASK:
            out.append(Problem("misplaced_field", "only task nodes can loop", n.id))
        if n.loop.until.path.split(".")[0] != "output":
            out.append(Problem("bad_path", "a loop's 'until' path must start with 'output'", n.id))


def _check_policy(wf: Workflow, n: Node, ids: set[str], out: list[Problem]) -> None:
    if n.policy_ref is not None and n.policy_ref not in wf.policies:
        out.append(Problem("unknown_policy", f"policy_ref {n.policy_ref!r} does not resolve", n.id))
    policy = wf.policies.get(n.policy_ref) if n.policy_ref is not None else None
    if policy is not None:
        for c in policy.catch:
            if c.next not in ids:
                out.append(Problem("unknown_node", f"catch routes to unknown node {c.next!r}", n.id))
        if policy.idempotency is not None:
            for ph in PLACEHOLDER.findall(policy.idempotency.key):
                if not _PATH.match(ph):
                    out.append(Problem("bad_key_template", f"idempotency key placeholder {{{ph}}} is not a "
                                       "dotted name", n.id))
                elif ph.split(".")[0] not in _ROOTS | ids | set(n.params):
                    out.append(Problem("bad_key_template", f"idempotency key placeholder {{{ph}}} names "
                                       "nothing the node can see", n.id))
    if policy is not None and policy.retry.max_attempts > 1 and not policy.retry.retry_on:
        # Every engine would attempt once and fail: the attempts declared would never be used.
        out.append(Problem("useless_retry", f"retry.maxAttempts {policy.retry.max_attempts} with an empty "
                           "retryOn retries nothing: name the errors to retry (e.g. TransientError, Timeout, "
                           "'*') or set maxAttempts 1", n.id))
    if n.loop is not None and (policy is None or policy.loop_guard is None):
        out.append(Problem("unguarded_loop", "loop has no loop_guard (set one in its policy)", n.id))
    if policy is not None and policy.on_failure is OnFailure.RETRY and n.repair is None:
        out.append(Problem("missing_repair", "on_failure 'retry' escalates through recovery and needs a "
                           "repair spec", n.id))
    comp = wf.compensation_of(n)
    if n.side_effect in (SideEffect.WRITE, SideEffect.EXTERNAL) and comp is None:
        out.append(Problem("missing_compensation", f"{n.side_effect} side effect without a compensation",
                           n.id))
    if comp is not None:
        if comp not in ids:
            out.append(Problem("unknown_node", f"compensation {comp!r} does not exist", n.id))
        elif comp == n.id:
            out.append(Problem("bad_compensation", "a node cannot compensate itself", n.id))


def _check_graph(wf: Workflow, ids: set[str], out: list[Problem], entry_ids: set[str]) -> None:
    comp_ids = wf.compensation_ids()
    preds: dict[str, list[str]] = defaultdict(list)
    succs: dict[str, list[str]] = defaultdict(list)
    for d in wf.dependencies():
        if d.source in ids and d.target in ids:
            preds[d.target].append(d.source)
            succs[d.source].append(d.target)
    for e in wf.edges:
        for end in (e.source, e.target):
            if end not in ids:
                out.append(Problem("unknown_node", f"edge {e.source} -> {e.target} names unknown node "
                                   f"{end!r}", None))
        if e.source == e.target:
            out.append(Problem("cycle", "edge from a node to itself", e.source))
    for c in sorted(comp_ids & ids):
        if preds[c] or succs[c]:
            out.append(Problem("bad_compensation", "a compensation node must not have edges (it runs only "
                               "when a run rolls back)", c))
    for n in wf.nodes:
        if n.join is Join.ANY_OF and len(set(preds[n.id])) < 2:
            out.append(Problem("bad_join", f"any_of join needs at least 2 candidates, has "
                               f"{len(set(preds[n.id]))}", n.id))
    # Kahn's algorithm: what cannot be ordered sits on (or behind) a cycle.
    graph_ids = [n.id for n in wf.nodes if n.id not in comp_ids]
    indeg = {i: len(set(preds[i])) for i in graph_ids}
    queue = [i for i in graph_ids if indeg[i] == 0]
    ordered: set[str] = set()
    while queue:
        i = queue.pop()
        ordered.add(i)
        for s in set(succs[i]):
            if s in indeg:
                indeg[s] -= 1
                if indeg[s] == 0:
                    queue.append(s)
    cyclic = [i for i in graph_ids if i not in ordered]
    for i in cyclic:
        out.append(Problem("cycle", "node is on or behind a cycle", i))
    roots = entry_ids or {i for i in graph_ids if not preds[i]}
    seen: set[str] = set()
    stack = [r for r in roots if r in ids]
    while stack:
        i = stack.pop()
        if i not in seen:
            seen.add(i)
            stack.extend(succs[i])
    for i in graph_ids:
        if i not in seen and i not in cyclic:
            out.append(Problem("unreachable", "node is not reachable from an entry node", i))


def _ancestors(preds: dict[str, set[str]], node_id: str) -> set[str]:
    out: set[str] = set()
    todo = list(preds[node_id])
    while todo:
        x = todo.pop()
        if x not in out:
            out.add(x)
            todo.extend(preds[x])
    return out


def _check_gates(wf: Workflow, out: list[Problem]) -> None:
    """A gate is decided from what exists whenever the node is reached: the run's inputs, or the output of an
    ancestor that is never gated itself (every engine has it by then: Argo resolves an ancestor's outputs)."""
    by_id, compensations = wf.node_map(), wf.compensation_ids()
    preds: dict[str, set[str]] = defaultdict(set)  # once, not per gated node
    for d in wf.dependencies():
        preds[d.target].add(d.source)
    for n in wf.nodes:
        if n.when is None:
            continue
        if n.kind not in (NodeKind.TASK, NodeKind.MAP) or n.id in compensations:
            out.append(Problem("misplaced_field", "only scheduled task and map nodes have a gate (when)", n.id))
        root = n.when.path.split(".")[0]
        if root == "inputs":
            continue
        if root not in by_id or root not in _ancestors(preds, n.id) or by_id[root].when is not None:
            out.append(Problem("bad_path", f"gate path {n.when.path!r} must start with 'inputs' or an ungated "
                               "ancestor's id", n.id))


def validate(wf: Workflow, *, require_output_contracts: bool = False) -> list[Problem]:
    """Every problem of ``wf`` (empty when it is valid)."""
    out: list[Problem] = []
    counts: dict[str, int] = defaultdict(int)
    for n in wf.nodes:
        counts[n.id] += 1
    for node_id, k in counts.items():
        if k > 1:
            out.append(Problem("duplicate_node", f"node id used {k} times", node_id))
    ids = set(counts)
    for node_id in sorted(ids & _RESERVED):
        out.append(Problem("reserved_id", f"{node_id!r} is reserved (a condition or key root)", node_id))
    entry = wf.meta.get("entry")
    if entry is not None and not isinstance(entry, list):  # `entry: a` was ignored: every root an entry
        out.append(Problem("schema", f"meta.entry must be a list of node ids, got {entry!r}", None))
    listed = entry if isinstance(entry, list) else []
    entry_ids = {e for e in listed if isinstance(e, str)}
    # meta is free-form: an entry may be a number, a list or a mapping, named (and ordered) by its repr.
    for e in sorted({repr(e) for e in listed if not isinstance(e, str) or e not in ids}):
        out.append(Problem("unknown_node", f"meta.entry names unknown node {e}", None))
    for n in wf.nodes:
        _check_kind(n, ids, out)
        _check_policy(wf, n, ids, out)
        _check_schema(n.input, n.id, "input contract", out)
        _check_schema(n.output, n.id, "output contract", out)
        if require_output_contracts and n.kind in (NodeKind.TASK, NodeKind.MAP) and n.output is None \
                and n.id not in wf.compensation_ids():
            out.append(Problem("missing_contract", "node has no output contract", n.id))
    for name, schema in wf.schemas.items():
        _check_schema(schema, None, f"schema {name!r}", out)
    for name, schema in wf.log_schemas.items():
        _check_schema(schema, None, f"log schema {name!r}", out)
    _check_gates(wf, out)
    _check_graph(wf, ids, out, entry_ids)
    return out


def ensure_valid(wf: Workflow, *, require_output_contracts: bool = False) -> Workflow:
    """Return ``wf`` if it is valid, else raise WorkflowError listing every problem."""
    problems = validate(wf, require_output_contracts=require_output_contracts)
    if problems:
        listing = "; ".join(str(p) for p in problems)
        raise WorkflowError(f"workflow {wf.name!r} is invalid ({len(problems)} problems): {listing}")
    return wf


def parse_workflow(doc: Any) -> tuple[Workflow | None, list[Problem]]:
    """Parse a workflow document; structural errors become problems naming the node where possible."""
    try:
        return Workflow.model_validate(doc), []
    except ValidationError as e:
        listed = doc.get("nodes") if isinstance(doc, dict) else None
        problems = []
        for err in e.errors():
            loc = err["loc"]
            node = None
            if len(loc) >= 2 and loc[0] == "nodes" and isinstance(loc[1], int):
                # By id when the node can be looked up by position (a YAML !!set loads as a set: it cannot).
                raw = listed[loc[1]] if isinstance(listed, list | tuple) else None
                node = raw["id"] if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"#{loc[1]}"
            # The document itself has no location (it is not a mapping): "document", not a bare ": ...".
            where = ".".join(str(x) for x in loc) or "document"
            # A validator's own message without pydantic's "Value error, " (it names Python's exception).
            problems.append(Problem("schema", f"{where}: {str(err['msg']).removeprefix('Value error, ')}", node))
        return None, problems


def validate_document(doc: Any, *, require_output_contracts: bool = False) -> list[Problem]:
    """Parse and validate a workflow document in one go."""
    wf, problems = parse_workflow(doc)
    if wf is None:
        return problems
    return validate(wf, require_output_contracts=require_output_contracts)
