"""ASL -> IR: read a state machine written by :func:`~alas_argo.engines.asl.to_asl` back into the IR.

:func:`read_native` reads what the states say (Task/Map/Parallel/Choice, Retry, Catch, TimeoutSeconds,
Parameters, the compensation chain); :func:`from_asl` then applies the IR values the compiler left in
``Comment`` fields for what ASL only approximates.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from alas_argo.engines import asl_names as an
from alas_argo.engines.extras import apply_extras, decoded, normalized
from alas_argo.errors import InputError
from alas_argo.ir import Node, Policy, Workflow

__all__ = ["from_asl", "iter_states", "read_native", "state_of"]


def iter_states(states: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (name, state), nested ones (Map processors, Parallel branches) after their parent."""
    for name, st in states.items():
        yield name, st
        if st.get("Type") == "Map":
            yield from iter_states(st["ItemProcessor"]["States"])
        for branch in st.get("Branches") or []:
            yield from iter_states(branch["States"])


def state_of(doc: dict[str, Any], node_id: str) -> dict[str, Any] | None:
    """The state that carries node ``node_id``'s policy and Comment (a Map's inner Task for map nodes)."""
    found = None
    for name, st in iter_states(doc["States"]):
        if name == node_id + an.ITEM_SUFFIX:
            return st
        if name == node_id:
            found = st
        if found is None and name.startswith(an.UNDO_PREFIX) and (st.get("Parameters") or {}).get("node") == node_id:
            found = st  # a compensation node lives in (the first of) its undo states
    return found


def _policy(st: dict[str, Any], ends: dict[str, Any] | None = None, *, where: str = "") -> dict[str, Any]:
    """The policy a node's state says (``ends``: the last rung of its repair ladder, which holds its Catch)."""
    retry: dict[str, Any] = {"maxAttempts": 1}
    if st.get("Retry"):
        if len(st["Retry"]) > 1:
            # One retry rule per node in the IR (what the compiler writes); dropping the others would change
            # which errors are retried without a word.
            raise InputError(f"{len(st['Retry'])} Retry rules: a node's policy holds one (merge them, or split "
                             "the state)", where=f"state {where}")
        r = st["Retry"][0]
        rate = float(r.get("BackoffRate", 2.0))
        backoff: dict[str, Any] = {"kind": "fixed" if rate == 1.0 else "exponential",
                                   "initial": float(r.get("IntervalSeconds", 1)),
                                   "factor": 2.0 if rate == 1.0 else rate,
                                   "jitter": 1.0 if r.get("JitterStrategy") == "FULL" else 0.0}
        if "MaxDelaySeconds" in r:
            backoff["max"] = float(r["MaxDelaySeconds"])
        retry = {"maxAttempts": int(r.get("MaxAttempts", 3)) + 1, "backoff": backoff,
                 "retryOn": [an.from_error(e) for e in r["ErrorEquals"]]}
    policy: dict[str, Any] = {"retry": retry, "onFailure": "rollback", "catch": [
        {"errors": [an.from_error(e) for e in c["ErrorEquals"]], "next": c["Next"]}
        for c in (ends or st).get("Catch") or [] if not c["Next"].startswith(an.UNDO_PREFIX)]}
    if "TimeoutSeconds" in st:
        policy["timeout"] = float(st["TimeoutSeconds"])
    params = st.get("Parameters") or {}
    if "idempotency_key" in params:
        policy["idempotency"] = {"key": params["idempotency_key"]}
    if "loop" in params:
        loop = params["loop"]
        policy["loopGuard"] = {"maxIters": loop["max_iters"], **({"deadline": loop["deadline"]}
                                                                if "deadline" in loop else {})}
    return policy


class _Reader:
    def __init__(self, ladders: dict[str, list[dict[str, Any]]]) -> None:
        self.nodes: list[dict[str, Any]] = []
        self.policies: dict[str, Any] = {}
        #: Node id -> the rung states of its repair ladder, in order.
        self.ladders = ladders

    def task_fields(self, node: dict[str, Any], st: dict[str, Any]) -> None:
        node["role"] = an.role_of(st.get("Resource"))
        params = st.get("Parameters") or {}
        node["params"] = params.get("params", {})
        if "loop" in params:
            node["loop"] = {"until": params["loop"]["until"]}
        rungs = self.ladders.get(node["id"])
        if rungs:
            node["repair"] = rungs[0]["Parameters"]["repair"]
        elif "repair" in params:  # a map item or a parallel branch climbs the ladder inside its Task
            node["repair"] = params["repair"]

    def policy_of(self, node: dict[str, Any], st: dict[str, Any], catches: dict[str, Any] | None = None) -> None:
        """``catches``: the state holding the node's Catch when ``st`` does not (a Map state, for its item)."""
        ref = an.from_comment(st.get("Comment")).get("policyRef")
        if ref is not None:
            node["policyRef"] = ref
            rungs = self.ladders.get(node["id"])
            self.policies.setdefault(ref, _policy(st, rungs[-1] if rungs else catches, where=node["id"]))

    def read(self, name: str, st: dict[str, Any]) -> dict[str, Any]:
        kind = st.get("Type")
        node: dict[str, Any] = {"id": name}
        if kind == "Task":
            node["kind"] = "task"
            self.task_fields(node, st)
            self.policy_of(node, st)
        elif kind == "Map":
            inner = st["ItemProcessor"]["States"][st["ItemProcessor"]["StartAt"]]
            node.update({"kind": "map", "items": an.path_from_asl(st["ItemsPath"])})
            if "MaxConcurrency" in st:
                node["maxConcurrency"] = st["MaxConcurrency"]
            self.task_fields(node, inner)
            self.policy_of(node, inner, st if "Catch" in st else None)
        elif kind == "Parallel":
            node.update({"kind": "parallel", "branches": []})
            for branch in st["Branches"]:
                start = branch["StartAt"]
                self.nodes.append(normalized(Node, self.read(start, branch["States"][start])))
                node["branches"].append(start)
            self.policy_of(node, st)
        elif kind == "Choice":
            node.update({"kind": "choice", "choices": [{"when": an.rule_to_condition(r), "next": r["Next"]}
                                                       for r in st["Choices"]]})
            if "Default" in st:
                node["default"] = st["Default"]
            self.policy_of(node, st)
        else:
            raise InputError(f"unsupported state type {kind!r}", where=f"state {name}")
        return node


def read_native(doc: dict[str, Any]) -> dict[str, Any]:
    """The IR document the states describe (Comment extras not applied).

    Raises:
        InputError: The document is not a state machine of this shape.
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("States"), dict) or "StartAt" not in doc:
        raise InputError("not an ASL state machine (needs StartAt and States)", where="definition")
    states: dict[str, Any] = doc["States"]
    # A repair ladder's later rungs are steps of their node (Parameters.rung), not nodes.
    ladders: dict[str, list[dict[str, Any]]] = {}
    rung_names = set()
    for name, st in states.items():
        if st.get("Type") == "Task" and "rung" in (st.get("Parameters") or {}):
            ladders.setdefault(str(st["Parameters"]["node"]), []).append(st)
            rung_names.add(name)
    # A gate's Choice state is the gate of the node it enters (IR ``when``), not a node; transitions into it
    # are transitions into that node.
    gates = {name: st for name, st in states.items() if name.endswith(an.GATE_SUFFIX) and st.get("Type") == "Choice"}
    gated = {str(st["Choices"][0]["Next"]): an.rule_to_condition(st["Choices"][0]) for st in gates.values()}
    through = {name: str(st["Choices"][0]["Next"]) for name, st in gates.items()}
    # A guard's Choice state (the runs downstream of caught nodes) is no node either: it enters its run's gate
    # or first node.
    guards = {name for name, st in states.items() if name.endswith(an.ALIVE_SUFFIX) and st.get("Type") == "Choice"}
    for name in guards:
        default = str(states[name]["Default"])
        through[name] = through.get(default, default)
    reader = _Reader(ladders)
    comp_of: dict[str, str] = {}
    comp_nodes: dict[str, dict[str, Any]] = {}
    for name, st in states.items():
        if name in (an.FAIL_STATE, an.SKIPPED_END) or name in rung_names or name in gates or name in guards:
            continue
        if name.startswith(an.UNDO_PREFIX):
            p = st["Parameters"]
            comp_of[p["compensates"]] = p["node"]
            comp_nodes.setdefault(p["node"], {"id": p["node"], "role": an.role_of(st["Resource"]),
                                              "params": p.get("params", {})})
            continue
        reader.nodes.append(reader.read(name, st))
    edges: list[dict[str, str]] = []
    into: dict[str, int] = {}
    kinds = {n["id"]: n.get("kind") for n in reader.nodes}
    targets = {b["next"] for n in reader.nodes if n.get("kind") == "choice" for b in n["choices"]}
    targets |= {n["default"] for n in reader.nodes if n.get("kind") == "choice" and n.get("default")}
    for name, st in states.items():
        nxt = through.get(st.get("Next") or "", st.get("Next"))
        if nxt and name in kinds and nxt in kinds:
            edges.append({"source": name, "target": nxt})
            if name in targets:
                into[nxt] = into.get(nxt, 0) + 1
    nodes = []
    for n in reader.nodes:
        if into.get(n["id"], 0) >= 2:
            n["join"] = "any_of"  # reached from several alternatives: whichever ran is the one it joins
        if n["id"] in comp_of:
            n["compensation"] = comp_of[n["id"]]
        nodes.append(normalized(Node, n))
    # Every node of a gated run carries its gate; the run is the chain from the gated node while Next stays
    # inside the nodes the gate's Default skips past.
    by_id = {n["id"]: n for n in nodes}
    for start, cond in gated.items():
        default = str(gates[start + an.GATE_SUFFIX]["Default"])
        skip = through.get(default, default)
        at: str | None = start
        while at is not None and at != skip and at in kinds:
            by_id[at]["when"] = cond
            at = through.get(states[at].get("Next") or "", states[at].get("Next"))
    nodes += [normalized(Node, c) for c in comp_nodes.values()]
    return {"name": "", "version": 1, "nodes": nodes, "edges": edges,
            "policies": {k: normalized(Policy, p) for k, p in reader.policies.items()},
            "schemas": {}, "logSchemas": {}, "meta": {}}


def from_asl(doc: dict[str, Any]) -> Workflow:
    """The IR workflow a definition written by ``to_asl`` encodes (lossless for those definitions).

    Raises:
        InputError: The definition is not of this shape, or the IR it encodes is invalid.
    """
    native = read_native(doc)
    top = an.from_comment(doc.get("Comment"))
    order = top.pop("nodeOrder", None)
    stateless = top.pop("nodes", [])
    policy_extras: dict[str, Any] = dict(top.pop("policies", {}) or {})
    node_extras: dict[str, Any] = {}
    for name, st in iter_states(doc["States"]):
        extra = an.from_comment(st.get("Comment"))
        name = name.removesuffix(an.ITEM_SUFFIX)
        if name.startswith(an.UNDO_PREFIX):
            name = str(st["Parameters"]["node"])
        if "node" in extra:
            node_extras[name] = extra["node"]
        if "policy" in extra:
            policy_extras[extra["policyRef"]] = extra["policy"]
    ir = apply_extras({k: v for k, v in native.items() if k not in ("nodes", "policies")}, top)
    nodes = {n["id"]: apply_extras(n, node_extras.get(n["id"])) for n in native["nodes"]}
    nodes.update({n["id"]: n for n in stateless})
    ir["nodes"] = [nodes[i] for i in order] if order else list(nodes.values())
    ir["policies"] = apply_extras(native["policies"], policy_extras or None)
    return decoded(ir, what="the ASL definition", where=str(ir.get("name") or "definition"))
