"""Random-structure fuzz of the IR compilers: hypothesis builds valid IR workflows of random shape (DAGs of task,
map, choice and parallel nodes with edges, any_of joins, gates, loops, repair specs, catch routes, compensations,
params, contracts and policies), keeps only what the IR's own validator accepts, and checks per engine that the
compiler either refuses with the project's documented :class:`UnsupportedFeature` or renders a document that
passes the offline checks (Argo: Hera's models, the CRD schema when present, the project's lint, a YAML round
trip; ASL: statelint, the project's ASL lint) and parses back to the identical workflow.

The examples are few and derandomized so the suite stays fast and deterministic; ``ALAS_FUZZ_EXAMPLES=<n>``
runs more by hand (e.g. 2000) with fresh randomness to hunt.
"""

from __future__ import annotations

import copy
import json
import os
import re
from typing import Any

import hera.workflows.models as m
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from statelint.config import Config
from statelint.linter import Linter

from alas_argo.engines.argo import to_argo
from alas_argo.engines.argo_parse import from_argo
from alas_argo.engines.asl import to_asl
from alas_argo.engines.asl_parse import from_asl
from alas_argo.engines.conformance import MATRIX, Support, UnsupportedFeature
from alas_argo.engines.lint import lint_argo
from alas_argo.ir import (
    Backoff,
    Branch,
    Catch,
    Condition,
    Edge,
    Idempotency,
    Loop,
    LoopGuard,
    Node,
    Policy,
    RepairSpec,
    Retry,
    Workflow,
    validate,
)
from tests.argo_schemas import argo_schema_dir, argo_validator

_HUNT = int(os.environ.get("ALAS_FUZZ_EXAMPLES", "0"))
_SETTINGS = settings(max_examples=_HUNT or 60, deadline=None, derandomize=not _HUNT, database=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                            HealthCheck.data_too_large])

# ---------------------------------------------------------------------------------------------------------------
# Leaves: names, values, conditions.

_RESERVED = {"inputs", "node", "run", "output", "previous", "item", "index"}
# Node ids: mostly short lower-case words (with _ and -), sometimes upper case (two ids may then share an Argo
# name, which the compiler refuses as a documented node_id feature).
_ids = st.one_of(st.from_regex(r"\A[a-z][a-z0-9]{0,5}([_-][a-z0-9]{1,4})?\Z", fullmatch=True),
                 st.from_regex(r"\A[a-z][a-z0-9_-]{0,9}\Z", fullmatch=True),
                 st.from_regex(r"\A[A-Za-z_][\w-]{0,6}\Z", fullmatch=True))
_ids = _ids.filter(lambda s: s not in _RESERVED and s.isascii())
_roles = st.from_regex(r"\A[a-z][a-z0-9_-]{0,12}\Z", fullmatch=True)
_fields = st.sampled_from(["jobs", "count", "valid", "mode", "x", "score", "items_2", "a-b"])
_inputs = st.sampled_from(["mode", "cases", "instance", "n", "run-id", "jobs"])
_text = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["", "it's", "a\\b", "{{workflow.name}}-z", "{{x}}", "$.a", "a\"b", "ok", "fast"])
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
                     st.floats(allow_nan=False, allow_infinity=False, width=64), _text)
_json = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=6) | st.sampled_from(["k.$", "$", "a.b"]), inner, max_size=3),
                     max_leaves=6)
_seconds = st.one_of(st.integers(1, 900).map(float), st.sampled_from([0.05, 0.25, 1.5, 2.75, 59.5]))
_errors = st.sampled_from(["TransientError", "Timeout", "ContractError", "StoreUnavailable", "InputError",
                           "IntegrityError", "Custom_Error", "*"])
_contracts = st.one_of(st.none(), st.sampled_from([
    {"type": "object"}, {"type": "object", "required": ["jobs"]},
    {"type": "object", "properties": {"count": {"type": "integer", "minimum": 0}}},
    {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}]))


@st.composite
def _condition(draw: st.DrawFn, root: str, *, simple: bool = False) -> Condition:
    """``simple``: mostly a comparison of one field with a number or a plain string (what Argo gates express)."""
    value: Any
    if simple and draw(st.integers(0, 3)) > 0:
        op = draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge"]))
        value = draw(st.one_of(st.integers(-5, 5), st.sampled_from(["fast", "ok", "a b"])))
        return Condition(path=f"{root}.{draw(_fields)}", op=op, value=value, negate=draw(st.booleans()))
    op = draw(st.sampled_from(["eq", "ne", "lt", "le", "gt", "ge", "in", "exists", "truthy"]))
    if op == "in":
        value = draw(st.lists(st.one_of(st.integers(-5, 5), _text), min_size=1, max_size=3))
    elif op in ("exists", "truthy"):
        value = None
    elif op in ("eq", "ne"):
        value = draw(st.one_of(st.integers(-100, 100), st.floats(-100, 100, allow_nan=False), _text,
                               st.booleans()))
    else:
        value = draw(st.one_of(st.integers(-100, 100), st.floats(-100, 100, allow_nan=False)))
    path = f"{root}.{draw(_fields)}" + draw(st.sampled_from(["", "", ".sub"]))
    return Condition(path=path, op=op, value=value, negate=draw(st.booleans()))


# ---------------------------------------------------------------------------------------------------------------
# Policies.

_backoff = st.tuples(st.sampled_from(["fixed", "linear", "exponential"]), _seconds,
                     st.one_of(st.none(), st.none(), _seconds),
                     st.sampled_from([1.0, 1.5, 2.0, 3.0]), st.sampled_from([0.0, 0.2, 1.0])).map(
    lambda t: Backoff(kind=t[0], initial=t[1], max=t[2], factor=t[3], jitter=t[4]))
_retry = st.tuples(st.integers(1, 5), _backoff, st.lists(_errors, min_size=1, max_size=3, unique=True)).map(
    lambda t: Retry(max_attempts=t[0], backoff=t[1], retry_on=t[2]))


@st.composite
def _policy(draw: st.DrawFn, *, handlers: list[str], key_roots: list[str], loop: bool, repair: bool) -> Policy:
    catch: list[Catch] = []
    if handlers and draw(st.integers(0, 3)) == 0:
        names = draw(st.lists(_errors, min_size=1, max_size=3, unique=True))
        split = draw(st.integers(1, len(names)))
        catch = [Catch(errors=names[:split], next=draw(st.sampled_from(handlers)))]
        if split < len(names):
            catch.append(Catch(errors=names[split:], next=draw(st.sampled_from(handlers))))
    key = None
    if draw(st.integers(0, 3)) == 0:
        # Braces as the key's own text too: locally a key like any other, on Argo refused where Argo would read
        # them as a reference's start ("{{", or "{" against a placeholder it writes as a reference).
        parts = draw(st.lists(st.sampled_from(["{run}", "{node}", "fixed", "{inputs.instance}", "k{{", "{", "}}",
                                               *[f"{{{r}}}" for r in key_roots]]), min_size=1, max_size=3))
        key = Idempotency(key="-".join(parts))
    guard = None
    if loop or draw(st.integers(0, 5)) == 0:
        guard = LoopGuard(max_iters=draw(st.integers(1, 9)), deadline=draw(st.one_of(st.none(), _seconds)))
    failures = ["stop", "skip", "rollback"] + (["retry"] if repair else [])
    return Policy(retry=draw(_retry), timeout=draw(st.one_of(st.none(), _seconds)), catch=catch, idempotency=key,
                  loop_guard=guard, on_failure=draw(st.sampled_from(failures)))


# ---------------------------------------------------------------------------------------------------------------
# Workflows.


@st.composite
def workflows(draw: st.DrawFn) -> Workflow:
    """A valid IR workflow of random structure.

    Scheduled nodes are numbered in a topological order: every arc (edge, choice target, parallel branch,
    catch route) goes from a lower to a higher number, so the graph is acyclic by construction; compensations are
    extra task nodes without arcs. What the construction does not rule out (a duplicate id after all, a gate on a
    gated ancestor, ...) the IR's own validator filters.
    """
    n = draw(st.integers(1, 10))
    ids = draw(st.lists(_ids, min_size=n, max_size=n, unique=True))
    kinds = [draw(st.sampled_from(["task", "task", "task", "map", "choice", "parallel"])) for _ in range(n)]
    if kinds[0] in ("parallel",):
        kinds[0] = "task"  # a parallel node needs earlier nodes as branches
    inputs = draw(st.dictionaries(_inputs, st.sampled_from(["1", "fast", "[1,2]", "ft06", ""]), max_size=4))
    # Arcs (index -> index); the preds of a node decide the join and gate paths.
    preds: dict[int, set[int]] = {i: set() for i in range(n)}
    edges: list[Edge] = []
    choice_targets: dict[int, list[int]] = {}
    for i in range(n):
        if kinds[i] == "choice":
            later = list(range(i + 1, n))
            if not later:
                kinds[i] = "task"
                continue
            targets = draw(st.lists(st.sampled_from(later), min_size=1, max_size=3))
            choice_targets[i] = targets
            for t in targets:
                preds[t].add(i)
    # Sometimes a choice's targets have no other arcs, so that they can converge on an any_of join (the shape
    # ASL expresses; elsewhere any_of needs concurrent candidates).
    pure = draw(st.booleans())
    only_choice = {t for ts in choice_targets.values() for t in ts} if pure else set()
    converging: set[int] = set()
    for j in range(1, n):
        converge = [ts for ts in choice_targets.values() if len(set(ts)) >= 2 and max(ts) < j]
        if pure and converge and j not in only_choice and draw(st.booleans()):
            sources = sorted(set(draw(st.sampled_from(converge))))
            converging.add(j)
        else:
            sources = draw(st.lists(st.integers(0, j - 1), max_size=min(j, 3), unique=True))
        for i in sources:
            if j in only_choice or (kinds[i] == "choice" and draw(st.booleans())):
                continue  # a choice's arcs are mostly its targets
            edges.append(Edge(source=ids[i], target=ids[j]))
            preds[j].add(i)
    parallel_branches: dict[int, list[int]] = {}
    for j in range(n):
        if kinds[j] == "parallel":
            branches = draw(st.lists(st.integers(0, j - 1), min_size=1, max_size=3, unique=True))
            parallel_branches[j] = branches
            for b in branches:
                preds[j].add(b)

    def ancestors(j: int) -> set[int]:
        out: set[int] = set()
        todo = list(preds[j])
        while todo:
            x = todo.pop()
            if x not in out:
                out.add(x)
                todo.extend(preds[x])
        return out

    # Compensations: task nodes without arcs.
    comp_ids = draw(st.lists(_ids.filter(lambda s: s not in ids), max_size=2, unique=True))
    policies: dict[str, Policy] = {}
    nodes: list[Node] = []
    gates: dict[int, Condition] = {}
    for j in range(n):
        kind = kinds[j]
        anc = sorted(ancestors(j))
        kw: dict[str, Any] = {"id": ids[j], "kind": kind}
        if draw(st.integers(0, 4)) == 0:
            kw["description"] = draw(_text)
        if kind in ("task", "map"):
            kw["role"] = draw(_roles)
            if draw(st.booleans()):
                kw["params"] = draw(st.dictionaries(st.from_regex(r"\A[a-z][a-z0-9_]{0,5}\Z", fullmatch=True), _json,
                                                    max_size=3))
            kw["input"] = draw(_contracts) if draw(st.integers(0, 3)) == 0 else None
            kw["output"] = draw(_contracts)
        if kind == "map":
            roots = ["inputs"] + [ids[a] for a in anc]
            kw["items"] = draw(st.sampled_from(roots)) + draw(st.sampled_from(
                ["", ".sub.x", *[f".{f}" for f in ("jobs", "count", "items_2", "a-b")] * 3]))
            if draw(st.booleans()):
                kw["max_concurrency"] = draw(st.integers(1, 8))
        if kind == "choice":
            roots = ["inputs"] + [ids[a] for a in anc]
            targets = choice_targets[j]
            kw["choices"] = [Branch(when=draw(_condition(draw(st.sampled_from(roots)))), next=ids[t])
                             for t in targets[:-1] or targets]
            if len(targets) > 1 or draw(st.booleans()):
                kw["default"] = ids[targets[-1]]
        if kind == "parallel":
            kw["branches"] = [ids[b] for b in parallel_branches[j]]
            if draw(st.integers(0, 9)) == 0:
                kw["max_concurrency"] = draw(st.integers(1, 4))
        if len(preds[j]) >= 2 and (j in converging or draw(st.integers(0, 3)) == 0):
            kw["join"] = "any_of"
        loop = kind == "task" and draw(st.integers(0, 4)) == 0
        if loop:
            kw["loop"] = Loop(until=draw(_condition("output")))
        repair = draw(st.integers(0, 4)) == 0
        if repair:
            kw["repair"] = RepairSpec(patch=draw(_roles), replan=draw(st.one_of(st.none(), _roles)),
                                      max_patches=draw(st.integers(1, 3)), max_replans=draw(st.integers(1, 3)))
        if kind in ("task", "map") and draw(st.integers(0, 4)) == 0:
            ungated = [ids[a] for a in anc if a not in gates]
            cond = draw(_condition(draw(st.sampled_from(["inputs", *ungated])), simple=True))
            kw["when"] = cond
            gates[j] = cond
        comp = None
        if comp_ids and kind in ("task", "map") and draw(st.integers(0, 2)) == 0:
            comp = draw(st.sampled_from(comp_ids))
            kw["side_effect"] = draw(st.sampled_from(["write", "external", "read", "none"]))
        elif draw(st.integers(0, 5)) == 0:
            kw["side_effect"] = "read"
        handlers = [ids[h] for h in range(j + 1, n)]
        if loop or draw(st.integers(0, 2)) == 0:
            shared = [name for name, p in policies.items() if (p.loop_guard is not None or not loop)
                      and (p.on_failure != "retry" or repair) and not p.catch]
            if shared and draw(st.integers(0, 3)) == 0:
                kw["policy_ref"] = draw(st.sampled_from(shared))
            else:
                name = draw(st.sampled_from([f"p{j}", f"policy-{j}", f"P_{j}"]))
                key_roots = [ids[a] + "." + draw(_fields) for a in anc] + list(kw.get("params", {}))
                policies[name] = draw(_policy(handlers=handlers, key_roots=key_roots, loop=loop, repair=repair))
                if comp is not None and draw(st.booleans()):
                    policies[name] = policies[name].model_copy(update={"compensation": comp})
                    comp = None if draw(st.booleans()) else comp
                kw["policy_ref"] = name
                # Catch routes are arcs: remember them for the joins and gates below.
                for c in policies[name].catch:
                    preds[ids.index(c.next)].add(j)
        if comp is not None:
            kw["compensation"] = comp
        elif kw.get("side_effect") in ("write", "external") and "policy_ref" not in kw:
            kw["side_effect"] = "read"
        nodes.append(Node(**kw))
    for comp_id in comp_ids:
        nodes.append(Node(id=comp_id, role=draw(_roles), params=draw(st.dictionaries(st.sampled_from(["reason", "k"]),
                                                                             _scalars, max_size=1))))
    if draw(st.booleans()):
        # Declaration order need not be the topological one.
        nodes = draw(st.permutations(nodes))
    if draw(st.integers(0, 4)) == 0:
        policies["unused"] = draw(_policy(handlers=[], key_roots=[], loop=False, repair=False))
    if draw(st.integers(0, 4)) > 0:
        # Mostly declare the run inputs that gates, items and keys read (Argo resolves only declared ones).
        read = [n.when.path if n.when else None for n in nodes] + [n.items for n in nodes]
        read += [ph for p in policies.values() if p.idempotency
                 for ph in re.findall(r"\{([^{}]*)\}", p.idempotency.key)]
        for path in read:
            if path and path.startswith("inputs."):
                inputs.setdefault(path.split(".")[1], "1")
    meta: dict[str, Any] = {}
    if len(inputs) > 0 or draw(st.booleans()):
        meta["inputs"] = inputs
    if inputs and draw(st.integers(0, 3)) == 0:
        # The values a run input may take (Argo's parameter enum); now and then one its default is not among,
        # which Argo refuses at submission, so the compiler does.
        name = draw(st.sampled_from(sorted(inputs)))
        others = draw(st.lists(st.sampled_from(["0", "2", "x"]), max_size=2, unique=True))
        meta["input_enums"] = {name: others + ([str(inputs[name])] if draw(st.integers(0, 3)) else [])}
    if draw(st.integers(0, 4)) == 0:
        meta["owner"] = draw(_text)
    wf = Workflow(
        name=draw(st.from_regex(r"\A[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?\Z", fullmatch=True)),
        version=draw(st.integers(1, 5)), description=draw(st.one_of(st.none(), _text)),
        nodes=nodes, edges=edges, policies=policies, meta=meta,
        schemas=draw(st.sampled_from([{}, {"plan": {"type": "object"}}])),
        log_schemas=draw(st.sampled_from([{}, {"plan.committed": {"type": "object"}}])))
    assume(not validate(wf))
    return wf


# ---------------------------------------------------------------------------------------------------------------
# Checks.


def _matrix_refusal(engine: str, wf: Workflow) -> str | None:
    """The feature key of the first unsupported matrix row ``wf`` uses on ``engine``, or None."""
    for n in wf.nodes:
        for f in MATRIX:
            if f.support(engine)[0] is Support.UNSUPPORTED and f.uses(wf, n):
                return f.key
    return None


#: Refusals the compilers make beyond the matrix rows (documented in their docstrings): names an engine cannot hold;
#: Argo: gates, map items and idempotency keys reading what no Argo parameter holds, keys with braces Argo would read,
#: input enums without their default; ASL: gates it cannot place, a
#: parallel branch with other arcs, a node a Choice state cannot reach, a param key ending in '.$'.
_EXTRA_REFUSALS = {"argo": {"node_id", "gate", "map", "idempotency", "inputs"},
                   "asl": {"node_id", "gate", "parallel", "choice", "params"}}


def _compile(engine: str, wf: Workflow, compile_: Any) -> dict[str, Any] | None:
    expected = _matrix_refusal(engine, wf)
    try:
        doc: dict[str, Any] = compile_(wf)
    except UnsupportedFeature as e:
        assert e.feature == expected or (expected is None and e.feature in _EXTRA_REFUSALS[engine]), \
            f"{engine} refused {e.feature} on {e.node}, matrix expects {expected}: {e}"
        return None
    assert expected is None, f"{engine} compiled a workflow using unsupported {expected}"
    return doc


def _check_argo(wf: Workflow, kind: str) -> None:
    doc = _compile("argo", wf, lambda w: to_argo(w, image="alas:test", namespace="alas", kind=kind))
    if doc is None:
        return
    assert lint_argo(doc) == [], [str(p) for p in lint_argo(doc)]
    # A reference Argo would substitute that came from the IR's own strings (lint knows this one).
    assert "{{workflow.name}}-z" not in json.dumps(doc)
    model = m.WorkflowTemplate if kind == "WorkflowTemplate" else m.Workflow
    assert model.model_validate(copy.deepcopy(doc)).model_dump(by_alias=True, exclude_none=True, mode="json") == doc
    if argo_schema_dir() is not None:
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in argo_validator(kind).iter_errors(doc)]
        assert errors == [], errors[:5]
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    again = yaml.safe_load(text)
    assert again == doc
    back = from_argo(again)
    assert back == wf, "argo round trip differs"
    assert back.to_json() == wf.to_json()


def _check_asl(wf: Workflow) -> None:
    doc = _compile("asl", wf, to_asl)
    if doc is None:
        return
    text = json.dumps(doc)
    problems = [str(p) for p in Linter.validate(text, Config([], False, False))]
    assert problems == [], problems
    back = from_asl(json.loads(text))
    assert back == wf, "asl round trip differs"
    assert back.to_json() == wf.to_json()


@pytest.mark.timeout(120)
@_SETTINGS
@given(wf=workflows())
def test_random_workflow_compiles_to_argo(wf: Workflow) -> None:
    _check_argo(wf, "Workflow")


@pytest.mark.timeout(120)
@_SETTINGS
@given(wf=workflows())
def test_random_workflow_compiles_to_an_argo_template(wf: Workflow) -> None:
    _check_argo(wf, "WorkflowTemplate")


@pytest.mark.timeout(120)
@_SETTINGS
@given(wf=workflows())
def test_random_workflow_compiles_to_asl(wf: Workflow) -> None:
    _check_asl(wf)
