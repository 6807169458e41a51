"""The templates of a compiled Argo workflow: one container template per node (a DAG wrapper plus an item
template for map nodes, one more template per rung of a repair ladder), the ``main`` DAG with
``depends``/``when``/``withParam``, and the exit handler. Used by :func:`alas_argo.engines.argo.to_argo`; pure
functions of the IR. The options and container security are :mod:`alas_argo.engines.argo_options`, the
ladder's task wiring :mod:`alas_argo.engines.argo_ladder`."""

from __future__ import annotations

import re
from typing import Any

from alas_argo.engines import argo_ladder as ladder
from alas_argo.engines import argo_names as nm
from alas_argo.engines.argo_handlers import exit_handler
from alas_argo.engines.argo_options import EXECUTOR_PATCH, ArgoOptions, container, pod_security
from alas_argo.engines.argo_policy import deadline, retry_strategy
from alas_argo.engines.conformance import UnsupportedFeature
from alas_argo.engines.extras import dumps
from alas_argo.ir import (
    ANY_ERROR,
    Condition,
    Join,
    Node,
    NodeKind,
    OnFailure,
    Op,
    Policy,
    Via,
    Workflow,
    canonical_json,
)
from alas_argo.runtime.policies import MISSING, resolve

__all__ = ["EXECUTOR_PATCH", "ArgoOptions", "Compiler", "gate_expression", "pod_security"]

# Argo template and task names: lowercase DNS-label characters (the IR allows '_' and capitals).
_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\Z")
# Argo parameter names (its schema's pattern for output parameters).
_PARAM = re.compile(r"^[-a-zA-Z0-9_]+\Z")

def _deps(wf: Workflow) -> dict[str, list[tuple[str, Via]]]:
    out: dict[str, list[tuple[str, Via]]] = {n.id: [] for n in wf.nodes}
    for d in wf.dependencies():
        out[d.target].append((d.source, d.via))
    return out


def _implies(a: Condition | None, b: Condition | None) -> bool:
    """Whether gate ``a`` holding means gate ``b`` holds (``b`` None: no gate). Only what the compiler can see:
    the same condition, or ``>=`` thresholds on the same path."""
    if b is None or a == b:
        return True
    return (a is not None and a.path == b.path and a.op is b.op is Op.GE and not a.negate and not b.negate
            and isinstance(a.value, int | float) and isinstance(b.value, int | float) and a.value >= b.value)


def _data_deps(wf: Workflow, node: Node, deps: list[tuple[str, Via]]) -> list[str]:
    # any_of candidates may be skipped (their outputs do not exist); the step finds the winner in the log.
    if node.join is Join.ANY_OF:
        return []
    # A gated source's output exists only when its gate held: a consumer reads it only when its own gate
    # guarantees that (else it reads the log: _maybe_deps). Argo leaves an unresolvable
    # {{tasks.x.outputs...}} in the arguments of a task that runs, and the pod would get it. A source skipped
    # on failure has no output after its failure, and its consumers run then too.
    return list(dict.fromkeys(s for s, via in deps if via is not Via.CATCH
                              and wf.policy_for(wf.node(s)).on_failure is not OnFailure.SKIP
                              and _implies(node.when, wf.node(s).when)))


def _maybe_deps(wf: Workflow, node: Node, deps: list[tuple[str, Via]]) -> list[str]:
    """The dependencies whose output ``node`` gets when it exists, as the local runtime hands a node the outputs
    of the dependencies that ran: a gated source its own gate does not imply, one skipped on failure. The step
    reads them from the log (``--maybe``); a map's items are not read so (the local runtime hands its list)."""
    if node.join is Join.ANY_OF:
        return []
    given = _data_deps(wf, node, deps)
    return list(dict.fromkeys(s for s, via in deps if via is not Via.CATCH and s not in given
                              and wf.node(s).kind is not NodeKind.MAP))


_ARGO_OPS = {Op.EQ: "==", Op.NE: "!=", Op.LT: "<", Op.LE: "<=", Op.GT: ">", Op.GE: ">="}


def gate_expression(cond: Condition, node_id: str) -> str:
    """The Argo ``when`` of node ``node_id``'s gate: the condition's value read from a workflow parameter or an
    ancestor task's output parameter, compared as Argo's govaluate does (numbers as numbers, strings quoted).

    Raises:
        UnsupportedFeature: An operator or value Argo's ``when`` cannot compare this way (a string holding a quote,
            a backslash or braces Argo would substitute); names the gated node, the one whose IR to change.
    """
    root, _, rest = cond.path.partition(".")
    # A string is quoted as is: a quote or backslash would end or escape it early, and Argo substitutes `{{...}}`.
    if cond.op not in _ARGO_OPS or not _PARAM.match(rest) or isinstance(cond.value, bool) \
            or not isinstance(cond.value, int | float | str) \
            or (isinstance(cond.value, str) and any(c in cond.value for c in ("'", "\\", "{{", "}}"))):
        raise UnsupportedFeature("argo", node_id, "gate", f"{cond.op} {cond.value!r} on {cond.path!r}")
    ref = (f"{{{{workflow.parameters.{rest}}}}}" if root == "inputs"
           else f"{{{{tasks.{nm.dns(root)}.outputs.parameters.{rest}}}}}")
    if isinstance(cond.value, str):
        ref, value = f"'{ref}'", f"'{cond.value}'"
    else:
        value = str(cond.value)
    expr = f"{ref} {_ARGO_OPS[cond.op]} {value}"
    return f"!({expr})" if cond.negate else expr


def _last_task(n: Node) -> str:
    """The task whose failure is ``n``'s failure for good: its ladder's last rung, else its own."""
    return (ladder.rungs(n) or [("", "", nm.dns(n.id))])[-1][2]


def _template_names(n: Node) -> list[tuple[str, str]]:
    """(template name, what it is) of every template node ``n`` gets."""
    name = nm.dns(n.id)
    out = [(name, f"node {n.id}")]
    if n.kind is NodeKind.MAP:
        out.append((f"{name}-item", f"the item template of map node {n.id}"))
    out += [(task, f"the {level} rung of node {n.id}") for level, _, task in ladder.rungs(n)]
    return out


def ended(n: Node) -> str:
    """The task that ends once caught node ``n`` succeeded or failed for good (its consumers wait on it)."""
    return f"{nm.dns(n.id)}-ended"


def _caught_consumers(wf: Workflow) -> dict[str, list[str]]:
    """Caught node -> its all_of consumers (edges, parallel groups) that must not run after its caught failure.

    Argo v3.6.5 gives a task that did not complete (Omitted or Skipped) the phase of the failed task above it, and
    a leaf's phase decides the workflow's (dag.go, assessDAGPhase): a consumer of a caught failure that does not
    run, as locally, would fail the workflow that succeeds locally. So the consumers wait on a pod-less task that
    completes after the caught node either way (:func:`ended`), and are skipped by a ``when`` on its status: what
    does not run then sits under a task that succeeded. A node skipped on failure is left out (its consumers run
    after its failure: nothing is left incomplete); any_of joins too (another candidate may win); and a node whose
    routes name errors without ``*``: Argo runs its handler after any failure, and only an unmatched one fails
    the run locally, which the consumers hanging off the failed node still do on Argo."""
    comp = wf.compensation_ids()
    out: dict[str, list[str]] = {}
    for d in wf.dependencies():
        src, dst = wf.node(d.source), wf.node(d.target)
        policy = wf.policy_for(src)
        if (d.via in (Via.EDGE, Via.BRANCH) and any(ANY_ERROR in c.errors for c in policy.catch)
                and policy.on_failure is not OnFailure.SKIP
                and dst.join is Join.ALL_OF and src.id not in comp and dst.id not in comp):
            out.setdefault(src.id, [])
            if dst.id not in out[src.id]:
                out[src.id].append(dst.id)
    return out


def _check_names(wf: Workflow, bridged: set[str]) -> None:
    """Every node needs its own valid Argo template name, and so do its map item template, ladder rungs and, for a
    caught node in ``bridged``, the task after it (``ended``).

    Raises:
        UnsupportedFeature: A name is not a valid Argo name, or two templates would get the same name (the
            error names the node that came second and what holds the name already).
    """
    taken = {nm.MAIN: "the entrypoint", nm.EXIT_HANDLER: "the exit handler", nm.COMPENSATE: "the compensation step",
             nm.ENDED: "the template of the tasks after caught nodes"}
    for n in wf.nodes:
        names = _template_names(n) + ([(ended(n), f"the task after caught node {n.id}")] if n.id in bridged else [])
        for name, what in names:
            if not _NAME.match(name):
                raise UnsupportedFeature("argo", n.id, "node_id", f"{name!r} is not a valid Argo template name")
            if name in taken:
                raise UnsupportedFeature("argo", n.id, "node_id", f"template name {name!r} of {what} is already "
                                         f"used by {taken[name]}")
            taken[name] = what


def _check_reads(wf: Workflow, declared: dict[str, Any]) -> None:
    """What a gate, a map's items or an idempotency key read in Argo's own fields is a parameter Argo has.

    Raises:
        UnsupportedFeature: A gate or items path, or a key placeholder, reads ``inputs.<name>`` that
            ``meta.inputs`` does not declare: Argo resolves only declared workflow parameters, so
            ``{{workflow.parameters.<name>}}`` would fail the submission. Or a gate or items path reads a field of a
            map node's output: a map's DAG template has no output parameters (its outputs reach consumers as log
            keys, ``--mapped``), so ``{{tasks.<map>.outputs.parameters.<field>}}`` would not resolve. Names the
            node and ``gate``, ``map`` or ``idempotency``.
    """
    maps = {n.id for n in wf.nodes if n.kind is NodeKind.MAP}
    for n in wf.nodes:
        key = wf.policy_for(n).idempotency
        paths = [("gate", n.when.path if n.when is not None else None),
                 ("map", n.items if n.kind is NodeKind.MAP else None)]
        paths += [("idempotency", p) for p in nm.placeholders(key.key)] if key is not None else []
        for feature, path in paths:
            root, _, rest = (path or "").partition(".")
            if root == "inputs" and rest and rest.split(".")[0] not in declared:
                raise UnsupportedFeature("argo", n.id, feature, f"{path!r} reads a run input meta.inputs does not "
                                         "declare (Argo resolves only declared workflow parameters)")
            if feature != "idempotency" and path is not None and root in maps:
                raise UnsupportedFeature("argo", n.id, feature, f"{path!r} reads a field of a map node's output, "
                                         "which is no output parameter on Argo")


def _check_declared(inputs: dict[str, Any]) -> None:
    """Every run input ``meta.inputs`` declares is one Argo workflow parameter: a name of letters, digits, ``-``
    and ``_`` (a pod reads it back as ``--run-input NAME=VALUE``), and a default Argo leaves as it is.

    Raises:
        UnsupportedFeature: A name Argo's schema refuses (a space, a dot, ``{{``), or a default holding ``{{``,
            which Argo would substitute (names ``meta.inputs.<name>`` and ``inputs``).
    """
    for name, value in inputs.items():
        if not _PARAM.match(str(name)):
            raise UnsupportedFeature("argo", f"meta.inputs.{name}", "inputs", "a run input's name is a workflow "
                                     "parameter name: letters, digits, '-' and '_'")
        if "{{" in str(value):
            raise UnsupportedFeature("argo", f"meta.inputs.{name}", "inputs", "its default holds '{{', which Argo "
                                     "would substitute")


def _check_enums(inputs: dict[str, Any], enums: Any) -> dict[str, list[str]]:
    """``meta.input_enums``: the values each declared run input may take, as the workflow parameter's ``enum``.

    Returns:
        The enums as Argo writes them (each value a string).

    Raises:
        UnsupportedFeature: Not a mapping of declared inputs to non-empty lists of numbers or strings (a name
            meta.inputs does not declare had its enum silently dropped, and a string was split into letters), a
            value holding ``{{`` (Argo would substitute it), or a default that is not one of its input's values
            (Argo refuses the workflow at submission) (names ``meta.input_enums[.<name>]`` and ``inputs``).
    """
    if not isinstance(enums, dict):
        raise UnsupportedFeature("argo", "meta.input_enums", "inputs", "a mapping of run inputs to their values")
    out: dict[str, list[str]] = {}
    for name, values in enums.items():
        where = f"meta.input_enums.{name}"
        if name not in inputs:
            raise UnsupportedFeature("argo", where, "inputs", "names a run input meta.inputs does not declare")
        if not isinstance(values, list) or not values or not all(
                isinstance(v, int | float | str) and not isinstance(v, bool) for v in values):
            raise UnsupportedFeature("argo", where, "inputs", "the values are a non-empty list of numbers or strings")
        out[name] = [str(v) for v in values]
        if any("{{" in v for v in out[name]):
            raise UnsupportedFeature("argo", where, "inputs", "a value holds '{{', which Argo would substitute")
        if str(inputs[name]) not in out[name]:
            raise UnsupportedFeature("argo", where, "inputs", f"the default {str(inputs[name])!r} is not one of "
                                     "the values (Argo refuses the workflow)")
    return out


def _check_items(wf: Workflow) -> None:
    """Every map's items path is one Argo parameter: ``inputs.<name>`` or ``<node>.<field>``.

    Raises:
        UnsupportedFeature: The path names a whole document (``inputs``, ``<node>``), which no parameter holds,
            or a field inside a field (a run input is one workflow parameter, and an output parameter's name is
            letters, digits, ``-`` and ``_``: Argo's schema refuses ``sub.x``) (names the node and ``map``).
    """
    for n in wf.nodes:
        if n.kind is NodeKind.MAP and n.items and not _PARAM.match(n.items.partition(".")[2]):
            raise UnsupportedFeature("argo", n.id, "map", f"items {n.items!r} is no Argo parameter: name a run "
                                     "input ('inputs.<name>') or a field of a node's output ('<node>.<field>', "
                                     "letters, digits, '-' and '_')")


class Compiler:
    """Builds the Argo document of one workflow."""

    def __init__(self, wf: Workflow, opts: ArgoOptions) -> None:
        self.wf, self.o = wf, opts
        #: Caught node -> its consumers, which wait on the task after it (``ended``; see _caught_consumers).
        self.caught = _caught_consumers(wf)
        _check_names(wf, set(self.caught))
        self.deps = _deps(wf)
        self.comp_ids = wf.compensation_ids()
        self.inputs: dict[str, Any] = dict(wf.meta.get("inputs") or {})
        _check_declared(self.inputs)
        self.enums = _check_enums(self.inputs, wf.meta.get("input_enums") or {})
        _check_items(wf)
        _check_reads(wf, self.inputs)
        # Fields of a node's output that map nodes fan out over become output parameters of that node.
        self.fields: dict[str, list[str]] = {}
        for n in wf.nodes:
            if n.kind is NodeKind.MAP and n.items and not n.items.startswith("inputs."):
                src, field = n.items.split(".", 1)
                self.fields.setdefault(src, []).append(field)
            if n.when is not None and not n.when.path.startswith("inputs."):
                src, field = n.when.path.split(".", 1)
                if field not in self.fields.setdefault(src, []):
                    self.fields[src].append(field)
        #: Nodes compiled as a ladder of tasks: their consumers read their output from the log.
        self.ladders = {n.id for n in wf.nodes if ladder.laddered(n)}
        #: Map nodes: their consumers derive the items' output keys from the list the map fanned out over.
        self.maps = {n.id: n.items or "" for n in wf.nodes if n.kind is NodeKind.MAP}
        #: Targets of a choice: their tasks carry a ``when`` and may end Skipped.
        self.guarded = {d.target for d in wf.dependencies() if d.via is Via.CHOICE} | {
            n.id for n in wf.nodes if n.when is not None}
        # Argo says Skipped both for a node whose own gate was false (the local runtime goes on past it) and for
        # a choice's branch not taken (the local runtime skips what follows it). Past a node that can only be
        # skipped the second way, dependents wait for its success, so the dead path stays dead (Omitted) as it
        # does locally; a node that may be either is read as the former.
        gated = {n.id for n in wf.nodes if n.when is not None}
        self.dies_skipped = {d.target for d in wf.dependencies() if d.via is Via.CHOICE} - gated
        #: Node -> the caught nodes whose failure for good skips it by its ``when``: their direct consumers and,
        #: past a gated one (whose Skipped also means its gate was false, where the run goes on), its consumers.
        self.taints: dict[str, list[str]] = {}
        todo = [(c, x) for x, cs in self.caught.items() for c in cs]
        while todo:
            node, x = todo.pop()
            if x in self.taints.setdefault(node, []):
                continue
            self.taints[node].append(x)
            if node in gated:
                todo += [(d.target, x) for d in wf.dependencies() if d.source == node
                         and d.via in (Via.EDGE, Via.BRANCH) and wf.node(d.target).join is Join.ALL_OF]
        # A node skipped only by a caught failure above it is a dead path: what follows waits for its success.
        self.dies_skipped |= set(self.taints) - gated
        self.guarded |= set(self.taints)

    def param_deps(self, n: Node) -> list[str]:
        """Data dependencies whose output key reaches ``n`` as a task output parameter: all but the ladders,
        whose failed rungs set none (their consumers find the one rung output recorded, ``--recorded``), and the
        maps, whose items' keys would make one argument that grows with the fan-out (``--mapped``)."""
        return [d for d in _data_deps(self.wf, n, self.deps[n.id]) if d not in self.ladders and d not in self.maps]

    def container(self, args: list[str]) -> dict[str, Any]:
        return container(self.o, args)

    def step_args(self, n: Node, kind: str, data_deps: list[str], *, rung: str | None = None) -> list[str]:
        # --scope: the workflow object; output records are keyed by it, so a retried pod finds its own
        # earlier result while a later workflow on the same run (a repair) starts fresh.
        args = ["step", kind, "--node", n.id, "--run-id", self.o.run_id, "--scope", "{{workflow.name}}",
                "--outputs", nm.OUTPUTS, "--params", "{{inputs.parameters.params}}"]
        for name in self.inputs:
            args += ["--run-input", f"{name}={{{{workflow.parameters.{name}}}}}"]
        for d in data_deps:
            args += ["--input", f"{d}={{{{inputs.parameters.in-{nm.dns(d)}}}}}"]
        for d in _data_deps(self.wf, n, self.deps[n.id]):
            if d in self.ladders:
                args += ["--recorded", d]
            elif d in self.maps:
                args += ["--mapped", f"{d}={self.maps[d]}"]
        for d in _maybe_deps(self.wf, n, self.deps[n.id]):
            args += ["--maybe", d]
        for f in self.fields.get(n.id, []):  # what a gate or a map reads from this node's output parameters
            args += ["--export", f]
        if n.join is Join.ANY_OF:
            args += ["--candidates", ",".join(dict.fromkeys(s for s, _ in self.deps[n.id]))]
        if n.kind is NodeKind.MAP:
            args += ["--item", "{{inputs.parameters.item}}"]
        if n.kind is NodeKind.CHOICE:
            args += ["--choices", "{{inputs.parameters.choices}}"]
        if n.kind is NodeKind.PARALLEL:
            args += ["--branches", ",".join(n.branches)]
        if n.loop is not None and rung is None:
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
        if rung is not None:
            args += ["--rung", rung]
        if n.repair is not None and (rung is not None or not ladder.laddered(n)):
            # A rung (or a map item, which climbs the ladder in its own pod) needs the spec: roles and tries.
            args += ["--repair", dumps(n.repair.to_json())]
        return args

    def memo_key(self, n: Node, policy: Policy) -> str:
        assert policy.idempotency is not None
        named = {m.split(".")[0] for m in nm.placeholders(policy.idempotency.key)}
        if mapped := sorted(named & set(self.maps) & set(_data_deps(self.wf, n, self.deps[n.id]))):
            raise UnsupportedFeature("argo", n.id, "idempotency", f"the key names map node {mapped[0]}, whose "
                                     "items' keys no Argo template is handed (its consumers derive them)")
        deps = self.param_deps(n)
        for ph in nm.placeholders(policy.idempotency.key):
            root = ph.split(".")[0]
            if ph in ("run", "node", "item", "index") or (root == "inputs" and "." in ph) or root in deps \
                    or root not in n.params:
                continue
            # A param's value is written into the key as is, where Argo would substitute a `{{...}}` in it.
            value = resolve(ph, n.params)
            if value is not MISSING and "{{" in (value if isinstance(value, str) else canonical_json(value)):
                raise UnsupportedFeature("argo", n.id, "idempotency", f"the key's {{{ph}}} is a param holding "
                                         "'{{', which Argo would substitute")
        key = nm.key_to_argo(policy.idempotency.key, node_id=n.id, run=self.o.run_id,
                             deps=deps, has_item=n.kind is NodeKind.MAP, params=n.params)
        # Braces the template holds as text are the key's own locally; Argo takes every `{{` as a reference's
        # start, so a `{{` it holds, or a `{` against a placeholder written as a reference, fails the submission.
        if strays := nm.substitutions(key)[1]:
            raise UnsupportedFeature("argo", n.id, "idempotency", f"the key holds braces Argo would read as the "
                                     f"start of a reference ({strays[0]!r} in the rendered key {key!r})")
        return key

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

    def leaf(self, n: Node, name: str, kind: str, data_deps: list[str], ann: dict[str, str], *,
             rung: str | None = None) -> dict[str, Any]:
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
                             "container": self.container(self.step_args(n, kind, data_deps, rung=rung))}
        policy = self.wf.policy_for(n)
        retry = retry_strategy(policy)
        if retry is not None:
            t["retryStrategy"] = retry
        t.update(deadline(policy))
        if policy.idempotency is not None and self.o.memo_cache is not None:
            # Argo requires a maxAge; the log's idempotency records (checked by the step) never expire.
            t["memoize"] = {"key": self.memo_key(n, policy), "maxAge": "720h",
                            "cache": {"configMap": {"name": self.o.memo_cache}}}
        return t

    def templates_of(self, n: Node) -> list[dict[str, Any]]:
        data_deps = self.param_deps(n)
        name = nm.dns(n.id)
        if n.kind is NodeKind.MAP:
            item = f"{name}-item"
            args = [{"name": "item", "value": "{{item}}"}, {"name": "params", "value": "{{inputs.parameters.params}}"}]
            args += [{"name": f"in-{nm.dns(d)}", "value": f"{{{{inputs.parameters.in-{nm.dns(d)}}}}}"}
                     for d in data_deps]
            wrapper: dict[str, Any] = {
                "name": name, "metadata": {"annotations": self.annotations(n, policy=False)},
                "inputs": {"parameters": [{"name": "items"}, *self.in_params(n, data_deps)]},
                # No outputs: the items' keys are not handed on (an aggregated list would be one argument growing
                # with the fan-out, past Linux's 128 KiB for one string at about 1,400 bench cases); consumers
                # derive them from the list fanned out over (`alas step --mapped`).
                "dag": {"tasks": [{"name": "item", "template": item, "withParam": "{{inputs.parameters.items}}",
                                   "arguments": {"parameters": args}}]}}
            if n.max_concurrency is not None:
                wrapper["parallelism"] = n.max_concurrency
            ann = {nm.ANN_ITEM_OF: n.id, **({nm.ANN_POLICY: n.policy_ref} if n.policy_ref else {})}
            return [wrapper, self.leaf(n, item, nm.dns(n.role or "map"), data_deps, ann)]
        kind = {NodeKind.CHOICE: "choose", NodeKind.PARALLEL: "gather"}.get(n.kind, nm.dns(n.role or "task"))
        ann = self.annotations(n, policy=True)
        if n.id in self.comp_ids:
            ann[nm.ANN_COMPENSATES] = ",".join(x.id for x in self.wf.nodes if self.wf.compensation_of(x) == n.id)
        # Each later rung is a template of its own running the rung's role, under the node's policy.
        rungs = [self.leaf(n, task, nm.dns(role), data_deps, {nm.ANN_RUNG_OF: n.id, nm.ANN_RUNG: level}, rung=level)
                 for level, role, task in ladder.rungs(n)]
        return [self.leaf(n, name, kind, data_deps, ann), *rungs]

    def term(self, n: Node, src: str, via: Via, *, bridged: bool = True) -> str:
        """The ``depends`` term of ``n`` on its dependency ``src`` (``bridged``: through the task after a caught
        ``src``, else on ``src`` itself)."""
        s, any_of = nm.dns(src), n.join is Join.ANY_OF
        skips = via is not Via.CATCH and self.wf.policy_for(self.wf.node(src)).on_failure is OnFailure.SKIP
        if bridged and via is not Via.CATCH and n.id in self.caught.get(src, ()):
            return ended(self.wf.node(src))
        if src in self.ladders:
            node = self.wf.node(src)
            # A catch handler waits for the ladder's last rung to fail; a consumer for any rung to succeed
            # (or, as a bare dependency accepts, the node to be skipped by its choice).
            if via is Via.CATCH:
                return ladder.failed_term(node)
            group = ladder.succeeded_group(node, skipped=not any_of and src in self.guarded
                                           and src not in self.dies_skipped)
            return f"({group} || {ladder.failed_term(node)})" if skips else group
        if via is Via.CATCH:
            return f"{s}.Failed"
        if skips:
            # on_failure skip: the dependents run after a failure too. Argo refuses continueOn in a DAG that uses
            # depends (validate.go), so the failure is accepted where it is consumed.
            return f"({s}.Succeeded || {s}.Failed)" if any_of else f"({s} || {s}.Failed)"
        return f"{s}.Succeeded" if any_of or src in self.dies_skipped else s

    def tasks(self, n: Node) -> list[dict[str, Any]]:
        """The DAG tasks of ``n``: its own, then one per later rung of its repair ladder."""
        deps = self.deps[n.id]
        op = " || " if n.join is Join.ANY_OF else " && "
        terms = [self.term(n, src, via) for src, via in deps]
        t: dict[str, Any] = {"name": nm.dns(n.id), "template": nm.dns(n.id)}
        if terms:
            t["depends"] = op.join(dict.fromkeys(terms))
        whens = [f"'{{{{tasks.{nm.dns(s)}.outputs.parameters.branch}}}}' == '{n.id}'" for s, via in deps
                 if via is Via.CHOICE]
        when = " || ".join(whens)
        if n.when is not None:
            gate = gate_expression(n.when, n.id)
            when = f"({when}) && {gate}" if whens else gate
        # Skipped after a caught failure above (see _caught_consumers). First, so a gate stays the last term
        # (argo_parse reads it there).
        alive = [f"'{{{{tasks.{_last_task(self.wf.node(x))}.status}}}}' != 'Failed'" for x in self.taints.get(n.id, [])]
        if alive:
            when = " && ".join([*alive, f"({when})" if len(whens) > 1 and n.when is None else when] if when else alive)
        if when:
            t["when"] = when
        args = [{"name": f"in-{nm.dns(d)}", "value": f"{{{{tasks.{nm.dns(d)}.outputs.parameters.key}}}}"}
                for d in self.param_deps(n)]
        if n.kind is NodeKind.MAP and n.items:
            root, rest = n.items.split(".", 1)
            src = (f"{{{{workflow.parameters.{rest}}}}}" if root == "inputs"
                   else f"{{{{tasks.{nm.dns(root)}.outputs.parameters.{rest}}}}}")
            args.insert(0, {"name": "items", "value": src})
        if args:
            t["arguments"] = {"parameters": args}
        # A rung's failure starts the next rung. No continueOn anywhere: Argo refuses it in a DAG that uses
        # depends; a failed task that some dependent consumes (the next rung, a catch handler, a skip's
        # dependents) is not a leaf, and only leaves decide the DAG's phase (dag.go, assessDAGPhase).
        out = [t]
        if n.id in self.caught:
            term = self.term(self.wf.node(self.caught[n.id][0]), n.id, Via.EDGE, bridged=False)
            out.append({"name": ended(n), "template": nm.ENDED,
                        "depends": f"({term} || {ladder.failed_term(n)})"})
        before = t["name"]
        for _, _, task in ladder.rungs(n):
            r: dict[str, Any] = {"name": task, "template": task, "depends": f"{before}.Failed"}
            if args:
                r["arguments"] = {"parameters": args}
            out.append(r)
            before = task
        return out

    def document(self) -> dict[str, Any]:
        wf = self.wf
        scheduled = [n for n in wf.nodes if n.id not in self.comp_ids]
        templates: list[dict[str, Any]] = [{"name": nm.MAIN, "dag": {"tasks": [
            t for n in scheduled for t in self.tasks(n)]}}]
        for n in wf.nodes:
            templates += self.templates_of(n)
        if self.caught:
            templates.append({"name": nm.ENDED, "suspend": {"duration": "0"}})
        exit_templates = exit_handler(self.wf, self.o)
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
            spec["arguments"] = {"parameters": [
                {"name": k, "value": str(v), **({"enum": self.enums[k]} if k in self.enums else {})}
                for k, v in self.inputs.items()]}
        if exit_templates:
            spec["onExit"] = nm.EXIT_HANDLER
        return {"apiVersion": "argoproj.io/v1alpha1", "kind": self.o.kind, "metadata": meta, "spec": spec}
