"""IR -> Amazon States Language: a pure function from a :class:`~alas_argo.ir.Workflow` to a state machine.

ASL runs one state at a time, so the DAG is serialized in a topological order (declaration order among
ready nodes). Choice targets and catch-only handlers are *alternatives*: the chain skips them and they are
entered only through their Choice rule or Catch. Parallel nodes become ``Parallel`` states holding their
branch nodes, map nodes ``Map`` states; policies become ``Retry``/``Catch``/``TimeoutSeconds``. Saga
compensation is a ``Catch`` of ``States.ALL`` on every state after a committed side effect into a chain of
compensation states in reverse commit order, ending in a ``Fail`` state. A task node's repair spec is its
escalation ladder as states: the node's Task catches every error into ``<node>/patch``, which catches into
``<node>/replan``; every rung writes the node's result path and goes on where the node would, and the last
rung carries the node's own Catch routes (and the saga's).
"""

from __future__ import annotations

import math
from typing import Any

from alas_argo.engines import asl_names as an
from alas_argo.engines.conformance import UnsupportedFeature, check_supported
from alas_argo.engines.extras import json_diff
from alas_argo.errors import ContractError
from alas_argo.ir import ANY_ERROR, BackoffKind, Join, Node, NodeKind, Policy, Via, Workflow, ensure_valid

__all__ = ["to_asl"]


def _retry(policy: Policy) -> list[dict[str, Any]]:
    r = policy.retry
    if r.max_attempts <= 1:
        return []
    errors = ["States.ALL"] if "*" in r.retry_on else [an.to_error(e) for e in r.retry_on]
    rule: dict[str, Any] = {"ErrorEquals": errors, "IntervalSeconds": max(1, round(r.backoff.initial)),
                            "MaxAttempts": r.max_attempts - 1,
                            "BackoffRate": r.backoff.factor if r.backoff.kind is BackoffKind.EXPONENTIAL else 1.0}
    if r.backoff.max is not None:
        rule["MaxDelaySeconds"] = max(1, round(r.backoff.max))
    rule["JitterStrategy"] = "FULL" if r.backoff.jitter >= 1 else "NONE"
    return [rule]


class _Compiler:
    def __init__(self, wf: Workflow) -> None:
        self.wf = wf
        self.comp_ids = wf.compensation_ids()
        self.preds: dict[str, list[tuple[str, Via]]] = {n.id: [] for n in wf.nodes}
        for d in wf.dependencies():
            self.preds[d.target].append((d.source, d.via))
        self.branch_of: dict[str, str] = {}
        result_of: dict[str, str] = {}  # a node's result path -> the node: two ids may make one path
        for n in wf.nodes:
            path = an.ref("results", n.id)
            if (other := result_of.setdefault(path, n.id)) != n.id:
                # `a-b` and `a_b` are one Reference Path step: one node's result and error would overwrite the other's.
                raise UnsupportedFeature("asl", n.id, "node_id", f"its result path {path} is node {other}'s too ('-' "
                                         "and '_' are one character in a Reference Path): rename one of them")
            if n.id.startswith(an.UNDO_PREFIX) or n.id in (an.FAIL_STATE, an.SKIPPED_END):
                raise UnsupportedFeature("asl", n.id, "node_id", f"ids starting {an.UNDO_PREFIX!r}, "
                                         f"{an.FAIL_STATE!r} and {an.SKIPPED_END!r} are reserved")
            if not n.id[0].isalpha():
                # The node's result and error live at $.results.<id> and $.errors.<id>, and a Reference Path step
                # starts with a letter.
                raise UnsupportedFeature("asl", n.id, "node_id", "a node id must start with a letter to name a "
                                         f"Reference Path step ({an.ref('results', n.id)} is none)")
            for b in n.branches:
                self.branch_of[b] = n.id
        for b, p in self.branch_of.items():
            arcs = [d for d in wf.dependencies() if d.source == b]
            # A catch route or a choice rule too, even into the parallel node: neither can leave the branch.
            if {d.target for d in arcs} != {p} or any(d.via in (Via.CATCH, Via.CHOICE) for d in arcs) \
                    or self.preds[b]:
                raise UnsupportedFeature("asl", b, "parallel", "a Parallel branch must have no other "
                                         "dependencies than its parallel node")

    def chain(self) -> list[str]:
        """Scheduled top-level nodes in a topological order (declaration order among ready nodes)."""
        todo = [n.id for n in self.wf.nodes if n.id not in self.comp_ids and n.id not in self.branch_of]
        done: set[str] = set(self.branch_of)
        out: list[str] = []
        while todo:
            ready = next(i for i in todo if all(s in done for s, _ in self.preds[i]))
            out.append(ready)
            done.add(ready)
            todo.remove(ready)
        return out

    def laddered(self, n: Node) -> bool:
        """Whether ``n``'s repair ladder is rendered as states (a top-level Task; map items and parallel branches
        climb it inside their Task)."""
        return n.repair is not None and n.kind is NodeKind.TASK and n.id not in self.branch_of

    def rungs(self, n: Node, st: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """The later rungs of ``n``'s ladder after its state ``st``: ``st``'s Catch routes (its own and the
        saga's) move to the last rung, and ``st`` catches every error into the first."""
        spec = n.repair
        assert spec is not None
        ladder = [("patch", spec.patch)] + ([("replan", spec.replan)] if spec.replan is not None else [])
        own = st.pop("Catch", [])
        st["Catch"] = [{"ErrorEquals": ["States.ALL"], "Next": an.rung_state(n.id, "patch"),
                        "ResultPath": an.ref("errors", n.id)}]
        out: dict[str, dict[str, Any]] = {}
        for i, (level, role) in enumerate(ladder):
            rung = self.task(n, role)
            rung["Parameters"].update({"rung": level, "repair": spec.to_json()})
            rung["ResultPath"] = an.ref("results", n.id)
            self.policy_fields(n, rung)
            rung.pop("Comment", None)
            rung.pop("Catch", None)
            rung.update({k: st[k] for k in ("Next", "End") if k in st})
            if i + 1 < len(ladder):
                rung["Catch"] = [{"ErrorEquals": ["States.ALL"], "Next": an.rung_state(n.id, ladder[i + 1][0]),
                                  "ResultPath": an.ref("errors", n.id)}]
            elif own:
                rung["Catch"] = own
            out[an.rung_state(n.id, level)] = rung
        return out

    def alternative(self, node_id: str) -> bool:
        preds = self.preds[node_id]
        return bool(preds) and all(via in (Via.CHOICE, Via.CATCH) for _, via in preds)

    def task(self, n: Node, role: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {"node": n.id, "params": n.params, "run_id.$": "$.run_id",
                                  "inputs.$": "$.inputs", "results.$": "$.results"}
        policy = self.wf.policy_for(n)
        if policy.idempotency is not None:
            params["idempotency_key"] = policy.idempotency.key
        if n.loop is not None:
            guard = policy.loop_guard
            params["loop"] = {"until": n.loop.until.to_json(), "max_iters": guard.max_iters if guard else 1,
                              **({"deadline": guard.deadline} if guard and guard.deadline else {})}
        if n.repair is not None and not self.laddered(n):
            # A map item or parallel branch climbs the ladder itself after a failure States.Retry gave up on.
            params["repair"] = n.repair.to_json()
        if n.kind is NodeKind.MAP:
            params["item.$"] = "$$.Map.Item.Value"
        return {"Type": "Task", "Resource": an.RESOURCE + (role or "task"), "Parameters": params}

    def policy_fields(self, n: Node, state: dict[str, Any]) -> None:
        policy = self.wf.policy_for(n)
        if retry := _retry(policy):
            state["Retry"] = retry
        if policy.timeout is not None:
            state["TimeoutSeconds"] = max(1, math.ceil(policy.timeout))
        if policy.catch:
            # Routes are tried in order, so none after a '*' route is ever taken; ASL allows States.ALL only in
            # the last route (the extras keep the rest of the list).
            wild = next((i for i, c in enumerate(policy.catch) if ANY_ERROR in c.errors), len(policy.catch))
            state["Catch"] = [{"ErrorEquals": ["States.ALL"] if ANY_ERROR in c.errors else
                               [an.to_error(e) for e in c.errors], "Next": c.next, "ResultPath": an.ref("errors", n.id)}
                              for c in policy.catch[:wild + 1]]
        if n.policy_ref is not None:
            state["Comment"] = an.to_comment({"policyRef": n.policy_ref})

    def state(self, n: Node) -> dict[str, Any]:
        if n.kind is NodeKind.CHOICE:
            rules = [{**an.condition_to_rule(b.when.to_json()), "Next": b.next} for b in n.choices]
            st: dict[str, Any] = {"Type": "Choice", "Choices": rules}
            if n.default is not None:
                st["Default"] = n.default
            if n.policy_ref is not None:
                st["Comment"] = an.to_comment({"policyRef": n.policy_ref})
            return st
        if n.kind is NodeKind.PARALLEL:
            branches = []
            for b in n.branches:
                inner = self.state(self.wf.node(b))
                inner["End"] = True
                branches.append({"StartAt": b, "States": {b: inner}})
            # A Parallel state's result is the list of its branches' final states; the IR's parallel output is
            # each branch's output by branch id (as the local runtime and Argo's gather step hold it), so that
            # `<group>.<branch>.<field>` reads the same document on every engine.
            select = {f"{an.ref(b)[2:]}.$": f"$[{i}]{an.ref('results', b)[1:]}" for i, b in enumerate(n.branches)}
            st = {"Type": "Parallel", "Branches": branches, "ResultSelector": select,
                  "ResultPath": an.ref("results", n.id)}
            self.policy_fields(n, st)
            return st
        if n.kind is NodeKind.MAP:
            inner = self.task(n, n.role)
            self.policy_fields(n, inner)
            inner["End"] = True
            st = {"Type": "Map", "ItemsPath": an.path_to_asl(n.items or "inputs.items"),
                  "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": n.id + an.ITEM_SUFFIX,
                                    "States": {n.id + an.ITEM_SUFFIX: inner}},
                  "ResultPath": an.ref("results", n.id)}
            if n.max_concurrency is not None:
                st["MaxConcurrency"] = n.max_concurrency
            if "Catch" in inner:  # an item's failure fails the Map state; its routes lead out of the processor
                st["Catch"] = inner.pop("Catch")
            return st
        st = self.task(n, n.role)
        st["ResultPath"] = an.ref("results", n.id)
        self.policy_fields(n, st)
        return st

    def document(self) -> dict[str, Any]:
        wf, order = self.wf, self.chain()
        states: dict[str, dict[str, Any]] = {}
        committed: list[str] = []  # side-effecting nodes, in chain order, that a later failure must undo
        for i, node_id in enumerate(order):
            n = wf.node(node_id)
            st = self.state(n)
            after = next((x for x in order[i + 1:] if not self.alternative(x)), None)
            if st["Type"] != "Choice":
                st.update({"Next": after} if after else {"End": True})
            elif "Default" not in st and after:
                st["Default"] = after
            if committed and st["Type"] != "Choice" and not any(
                    "States.ALL" in c["ErrorEquals"] for c in st.get("Catch", [])):
                st.setdefault("Catch", []).append(
                    {"ErrorEquals": ["States.ALL"], "Next": an.UNDO_PREFIX + committed[-1], "ResultPath": "$.error"})
            states[node_id] = st
            if self.laddered(n):
                states.update(self.rungs(n, st))
            if wf.compensation_of(n) is not None:
                committed.append(node_id)
        start = self.guards(order, states, self.gates(order, states))
        targets = {c["Next"] for st in states.values() for c in st.get("Catch", [])}
        used = max((i for i, x in enumerate(committed) if an.UNDO_PREFIX + x in targets), default=-1)
        committed = committed[:used + 1]  # unreachable undo states would be dead code (statelint rejects them)
        for i, node_id in enumerate(committed):
            comp = wf.node(wf.compensation_of(wf.node(node_id)) or "")
            after = an.UNDO_PREFIX + committed[i - 1] if i > 0 else an.FAIL_STATE
            undo: dict[str, Any] = {
                "Type": "Task", "Resource": an.RESOURCE + (comp.role or "task"),
                "Parameters": {"node": comp.id, "compensates": node_id, "params": comp.params, "run_id.$": "$.run_id"},
                "ResultPath": an.ref("compensations", node_id)}
            # The compensation node's own retry and timeout, as the local saga runs it; a compensation that still
            # fails is recorded and the chain goes on to the older ones (the local saga's "the others still run").
            policy = wf.policy_for(comp)
            if retry := _retry(policy):
                undo["Retry"] = retry
            if policy.timeout is not None:
                undo["TimeoutSeconds"] = max(1, math.ceil(policy.timeout))
            undo["Catch"] = [{"ErrorEquals": ["States.ALL"], "Next": after,
                              "ResultPath": an.ref("compensation_errors", node_id)}]
            if comp.policy_ref is not None:  # where the reader finds the policy's values (extras)
                undo["Comment"] = an.to_comment({"policyRef": comp.policy_ref})
            states[an.UNDO_PREFIX + node_id] = {**undo, "Next": after}
        if committed:
            states[an.FAIL_STATE] = {"Type": "Fail", "Error": "RolledBack",
                                     "Cause": "a step failed; committed steps were compensated in reverse order"}
        self.prune(start, states)
        return {"StartAt": start, "States": states}

    def prune(self, start: str, states: dict[str, dict[str, Any]]) -> None:
        """Drop the states nothing enters: an alternative only a dead catch route names (one after a '*' route,
        which the local runtime never takes either) and what only it led to.

        Raises:
            UnsupportedFeature: A scheduled node that is no alternative cannot be reached: the chain it is in
                ends at a Choice state, whose rules and Default go only to its targets (names the node, ``choice``).
        """
        while True:
            seen: set[str] = set()
            todo = [start]
            while todo:
                name = todo.pop()
                if name in seen or name not in states:
                    continue
                seen.add(name)
                st = states[name]
                todo += [st[k] for k in ("Next", "Default") if k in st]
                todo += [r["Next"] for r in st.get("Choices", []) + st.get("Catch", [])]
            lost = [x for x in states if x not in seen]
            if not lost:
                return
            for name in lost:
                if name in self.preds and not self.alternative(name):
                    raise UnsupportedFeature("asl", name, "choice", "the node cannot be reached: a Choice state "
                                             "before it in the chain goes only to its targets")
                del states[name]

    def gates(self, order: list[str], states: dict[str, dict[str, Any]]) -> str:
        """Put a Choice state in front of every run of chained nodes sharing a gate and send every transition
        into the run through it; returns the state the machine starts at.

        Raises:
            UnsupportedFeature: A gated node is a Choice target or catch handler (entered only by its own
                rule), or a gated run ends the chain (it would need a state to skip to).
        """
        wf, chained = self.wf, [x for x in order if not self.alternative(x)]
        entry: dict[str, str] = {}
        for node_id in order:
            n = wf.node(node_id)
            if n.when is None:
                continue
            if self.alternative(node_id):
                raise UnsupportedFeature("asl", node_id, "gate", "a gated node must be chained, not an alternative")
            k = chained.index(node_id)
            if k > 0 and wf.node(chained[k - 1]).when == n.when:
                continue
            after = next((x for x in chained[k + 1:] if wf.node(x).when != n.when), None)
            if after is None:
                raise UnsupportedFeature("asl", node_id, "gate", "a gated run needs a node after it to skip to")
            entry[node_id] = node_id + an.GATE_SUFFIX
            states[node_id + an.GATE_SUFFIX] = {
                "Type": "Choice", "Choices": [{**an.condition_to_rule(n.when.to_json()), "Next": node_id}],
                "Default": after}
        for name, st in states.items():
            if name.endswith(an.GATE_SUFFIX):
                continue
            if st.get("Next") in entry:
                st["Next"] = entry[st["Next"]]
            if st.get("Default") in entry:
                st["Default"] = entry[st["Default"]]
            for rule in st.get("Choices", []) + st.get("Catch", []):
                rule["Next"] = entry.get(rule["Next"], rule["Next"])
        for gate in entry.values():  # a skip lands on the next run's gate, when that run is gated too
            states[gate]["Default"] = entry.get(states[gate]["Default"], states[gate]["Default"])
        return entry.get(order[0], order[0])

    def taints(self) -> dict[str, frozenset[str]]:
        """Node -> the caught nodes whose caught failure skips it: locally, every all_of node downstream of a
        caught failure (through edges and choices) is skipped, whatever its own gate says."""
        wf = self.wf
        out: dict[str, set[str]] = {}
        caught = [n.id for n in wf.nodes if wf.policy_for(n).catch and n.id not in self.comp_ids
                  and n.id not in self.branch_of]
        deps = wf.dependencies()
        for x in caught:
            seen: set[str] = set()
            todo = [x]
            while todo:
                at = todo.pop()
                for d in deps:
                    if (d.source == at and d.via in (Via.EDGE, Via.CHOICE) and d.target not in seen
                            and wf.node(d.target).join is Join.ALL_OF):
                        seen.add(d.target)
                        todo.append(d.target)
            for t in seen:
                out.setdefault(t, set()).add(x)
        return {k: frozenset(v) for k, v in out.items()}

    def guards(self, order: list[str], states: dict[str, dict[str, Any]], start: str) -> str:
        """Put a Choice state in front of every run of chained nodes downstream of the same caught nodes: after
        a caught failure of one of them (its error recorded and no result: a ladder's rung that failed before
        one succeeded leaves a result) it goes on past the run, else into it (its gate, if gated). Without it
        the chain went on from the handler into the failed node's consumers, which the local runtime skips.
        Returns the state the machine starts at."""
        taints = self.taints()
        chained = [x for x in order if not self.alternative(x)]

        def entry(node_id: str | None) -> str:
            if node_id is None:
                return an.SKIPPED_END
            return node_id + an.GATE_SUFFIX if node_id + an.GATE_SUFFIX in states else node_id

        runs: dict[str, tuple[frozenset[str], str]] = {}
        for k, node_id in enumerate(chained):
            t = taints.get(node_id)
            if not t or (k > 0 and taints.get(chained[k - 1]) == t):
                continue
            runs[node_id] = (t, entry(next((x for x in chained[k + 1:] if taints.get(x) != t), None)))
        if not runs:
            return start
        into = {entry(n): n + an.ALIVE_SUFFIX for n in runs}
        for st in states.values():
            for field in ("Next", "Default"):
                if st.get(field) in into:
                    st[field] = into[st[field]]
            for rule in st.get("Choices", []) + st.get("Catch", []):
                rule["Next"] = into.get(rule["Next"], rule["Next"])
        for node_id, (caught, after) in runs.items():
            dead = [{"And": [{"Variable": an.ref("errors", x), "IsPresent": True},
                             {"Variable": an.ref("results", x), "IsPresent": False}]} for x in sorted(caught)]
            rule = dead[0] if len(dead) == 1 else {"Or": dead}
            states[node_id + an.ALIVE_SUFFIX] = {
                "Type": "Choice", "Choices": [{**rule, "Next": into.get(after, after)}], "Default": entry(node_id)}
        if any(after == an.SKIPPED_END for _, after in runs.values()):
            states[an.SKIPPED_END] = {"Type": "Succeed"}
        return into.get(start, start)


def _attach_extras(wf: Workflow, doc: dict[str, Any]) -> None:
    from alas_argo.engines.asl_parse import read_native, state_of

    native = read_native(doc)
    original = wf.to_json()
    by_node = {n["id"]: n for n in native["nodes"]}
    stateless: list[dict[str, Any]] = []
    for n in wf.nodes:
        node_diff = json_diff(n.to_json(), by_node.get(n.id, {}))
        st = state_of(doc, n.id)
        if n.id not in by_node:
            stateless.append(n.to_json())  # a compensation no failure can reach: nothing runs it
            continue
        if node_diff is None:
            continue
        if st is None:
            raise ContractError(f"no state for node {n.id}", where=wf.name)  # a compiler bug
        st["Comment"] = an.to_comment({**an.from_comment(st.get("Comment")), "node": node_diff})
    top: dict[str, Any] = {}
    for pname, pdiff in (json_diff(original.get("policies", {}), native.get("policies", {})) or {}).items():
        home = next((state_of(doc, n.id) for n in wf.nodes if n.policy_ref == pname), None)
        if home is not None and isinstance(pdiff, dict):
            home["Comment"] = an.to_comment({**an.from_comment(home.get("Comment")), "policy": pdiff})
        else:
            top.setdefault("policies", {})[pname] = pdiff
    rest = json_diff({k: v for k, v in original.items() if k not in ("nodes", "policies")},
                     {k: v for k, v in native.items() if k not in ("nodes", "policies")})
    top.update(rest or {})
    if stateless:
        top["nodes"] = stateless
    if [n.id for n in wf.nodes] != [n["id"] for n in native["nodes"]] + [n["id"] for n in stateless]:
        top["nodeOrder"] = [n.id for n in wf.nodes]
    doc["Comment"] = an.to_comment(top, f"ALAS workflow {wf.name} v{wf.version}")


def _check_state_names(wf: Workflow, doc: dict[str, Any]) -> None:
    """Every state name within ASL's length (a node's own, its ladder rungs', its gate's, its undo state's).

    Raises:
        UnsupportedFeature: A state name is too long; names the node it comes from.
    """
    from alas_argo.engines.asl_parse import iter_states

    for name, _ in iter_states(doc["States"]):
        if len(name) > an.MAX_STATE_NAME:
            node = max((n.id for n in wf.nodes if n.id in name), key=len, default=name)
            raise UnsupportedFeature("asl", node, "node_id", f"state name {name!r} has {len(name)} characters; "
                                     f"ASL allows at most {an.MAX_STATE_NAME}: shorten the node id")


def _path_keys(value: Any) -> list[str]:
    """Keys ending in ``.$`` anywhere in ``value``."""
    if isinstance(value, dict):
        return [k for k in value if k.endswith(".$")] + [k for v in value.values() for k in _path_keys(v)]
    if isinstance(value, list):
        return [k for v in value for k in _path_keys(v)]
    return []


def _check_parameters(wf: Workflow, doc: dict[str, Any]) -> None:
    """No value of the IR (a node's params, a loop's condition) puts a key ending in ``.$`` in a state's Parameters.

    Raises:
        UnsupportedFeature: Such a key is a path or intrinsic function to ASL, evaluated instead of passed on
            (names the node and ``params``).
    """
    from alas_argo.engines.asl_parse import iter_states

    for name, st in iter_states(doc["States"]):
        params = st.get("Parameters") or {}
        found = [k for key, value in params.items() if not key.endswith(".$") for k in _path_keys(value)]
        if found:
            node = params["node"] if isinstance(params.get("node"), str) else name
            raise UnsupportedFeature("asl", node, "params", f"the key {found[0]!r} ends in '.$', which ASL reads "
                                     "as a path to evaluate, not a value to pass on")


def to_asl(workflow: Workflow) -> dict[str, Any]:
    """Compile ``workflow`` to an ASL state machine definition.

    Raises:
        WorkflowError: The workflow is invalid.
        UnsupportedFeature: A node uses a feature ASL cannot express (names the node and the feature).
    """
    from alas_argo.engines.asl_parse import from_asl

    ensure_valid(workflow)
    check_supported("asl", workflow)
    doc = _Compiler(workflow).document()
    _check_state_names(workflow, doc)
    _check_parameters(workflow, doc)
    _attach_extras(workflow, doc)
    if from_asl(doc) != workflow:
        raise ContractError("asl round trip is not lossless", where=workflow.name)  # a compiler bug
    return {"Comment": doc.pop("Comment"), **doc}
