"""The conformance matrix: for every IR feature, how each engine expresses it (the authority, docs/ir-and-engines.md).

A row says, per engine, whether the feature is ``native`` (the engine document says it and the reverse
parser reads it from there), ``approximated`` (the engine runs something close; the exact IR value travels
in an annotation / Comment so the round trip stays lossless) or ``unsupported`` (the compiler refuses with
an :class:`UnsupportedFeature` naming the node and the feature). Each row also carries a predicate telling
whether a node uses the feature, which is how the compilers find unsupported uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from alas_argo.errors import WorkflowError
from alas_argo.ir import BackoffKind, Join, Node, NodeKind, OnFailure, SideEffect, Via, Workflow

__all__ = ["ENGINES", "MATRIX", "Feature", "Support", "UnsupportedFeature", "check_supported", "matrix_json",
           "matrix_markdown"]

#: Engines the matrix covers.
ENGINES = ("argo", "asl")


class Support(StrEnum):
    """How well an engine expresses a feature."""

    NATIVE = "native"
    APPROXIMATED = "approximated"
    UNSUPPORTED = "unsupported"


class UnsupportedFeature(WorkflowError):
    """An engine cannot express an IR feature a node uses."""

    def __init__(self, engine: str, node: str, feature: str, why: str) -> None:
        super().__init__(f"{engine} cannot express {feature} ({why})", where={"node": node, "feature": feature})
        self.engine = engine
        self.node = node
        self.feature = feature


Uses = Callable[[Workflow, Node], bool]


@dataclass(frozen=True)
class Feature:
    """One row of the matrix."""

    key: str
    ir: str
    argo: tuple[Support, str]
    asl: tuple[Support, str]
    uses: Uses

    def support(self, engine: str) -> tuple[Support, str]:
        """(status, mapping) of ``engine``."""
        value: tuple[Support, str] = getattr(self, engine)
        return value


def _policy(wf: Workflow, n: Node) -> Any:
    return wf.policies.get(n.policy_ref) if n.policy_ref else None


def _retry(pred: Callable[[Any], bool]) -> Uses:
    return lambda wf, n: (p := _policy(wf, n)) is not None and p.retry.max_attempts > 1 and pred(p.retry)


def _cap_binds(r: Any) -> bool:
    """Whether Argo's longest delay (duration * factor ** (retries - 1), factor 1 unless exponential) would
    exceed the retry's ``backoff.max``."""
    if r.backoff.max is None or r.max_attempts <= 1:
        return False
    factor = r.backoff.factor if r.backoff.kind is BackoffKind.EXPONENTIAL else 1.0
    return bool(r.backoff.initial * factor ** (r.max_attempts - 2) > r.backoff.max)


def _reads_a_branch(wf: Workflow, n: Node) -> bool:
    group_of = {b: g.id for g in wf.nodes if g.kind is NodeKind.PARALLEL for b in g.branches}
    paths = [c.when.path for c in n.choices] + ([n.when.path] if n.when is not None else [])
    return any(p.split(".")[0] in group_of for p in paths)


def _any_of_outside_choice(wf: Workflow, n: Node) -> bool:
    if n.join is not Join.ANY_OF:
        return False
    # Native in ASL only when every candidate is a target of one choice (exactly one of them runs).
    preds = [d for d in wf.dependencies() if d.target == n.id]
    nodes = wf.node_map()
    for d in preds:
        if d.via is not Via.EDGE:
            return True
        into = [e for e in wf.dependencies() if e.target == d.source]
        if len(into) != 1 or nodes[into[0].source].kind is not NodeKind.CHOICE:
            return True
    return False


N, A, U = Support.NATIVE, Support.APPROXIMATED, Support.UNSUPPORTED

MATRIX: tuple[Feature, ...] = (
    Feature("task", "task node (a role runs)", (N, "container template `alas step <role>`"),
            (N, "Task state"), lambda wf, n: n.kind is NodeKind.TASK),
    Feature("dependencies", "edges / all_of join", (N, "DAG task `depends: \"a && b\"`"),
            (A, "states chained in a topological order (no concurrency); edges in Comment"),
            lambda wf, n: any(e.target == n.id for e in wf.edges) and n.join is Join.ALL_OF),
    Feature("any_of", "any_of join", (N, "`depends: \"a.Succeeded || b.Succeeded\"`"),
            (N, "Choice targets converging on one state"), lambda wf, n: n.join is Join.ANY_OF),
    Feature("any_of_concurrent", "any_of join over candidates that are not choice targets",
            (N, "`depends: \"a.Succeeded || b.Succeeded\"`"),
            (U, "needs concurrent candidates with first-success semantics"), _any_of_outside_choice),
    Feature("choice", "choice node (branches + default)",
            (A, "`alas step choose` writes the branch taken, reading any node's output as the local runtime does "
                "(a dependency as handed over, any other from the log); targets run `when` it names them, and "
                "what follows a target waits for its success (`x.Succeeded`), so a branch not taken stays dead"),
            (N, "Choice state (StringEquals/NumericEquals/BooleanEquals/IsPresent, Not, Or; each test behind an "
                "IsPresent guard, so a missing path is false as locally)"),
            lambda wf, n: n.kind is NodeKind.CHOICE),
    Feature("gate", "node gate `when` (a condition on the run's inputs or an ungated ancestor's output)",
            (N, "the task's `when`, e.g. `{{tasks.blueprint.outputs.parameters.revealed}} >= 2` (the ancestor's "
                "field is an output parameter of its template, which its step writes from the role's output, "
                "`--export`; comparisons ==, !=, <, <=, >, >= against a number "
                "or a string). Argo v3.6.5 (dag.go): a task whose `when` is false is Skipped without resolving its "
                "arguments; a bare `depends` on a Skipped task is satisfied; a `.Failed` term is not, so a gated "
                "node's ladder rungs end Omitted; a consumer reads a gated node's output only when its own gate "
                "implies that one (else it reads the log: Argo would hand a running task the unresolved "
                "reference)"),
            (A, "a Choice state `<node>/gate` in front of each run of chained nodes sharing the gate: its rule "
                "enters the run, its Default goes to the state after it (the next gate when that is gated too: "
                "a chain of gates ending at the first ungated state); only chained nodes can be gated"),
            lambda wf, n: n.when is not None),
    Feature("parallel", "parallel node (group of branches)",
            (N, "fan-in task depending on every branch; `alas step gather` outputs each branch's output by id"),
            (N, "Parallel state with one branch per node; a ResultSelector keeps each branch's output by id"),
            lambda wf, n: n.kind is NodeKind.PARALLEL),
    Feature("branch_path", "a choice or gate reading a parallel branch's own output past the group",
            (N, "the step reads the branch's output record from the log"),
            (U, "a Parallel state's branches leave only its result in the state: read `<group>.<branch>...`"),
            _reads_a_branch),
    Feature("parallel_concurrency", "max_concurrency of a parallel node",
            (U, "a DAG cannot bound a group of sibling tasks"), (U, "Parallel states have no concurrency bound"),
            lambda wf, n: n.kind is NodeKind.PARALLEL and n.max_concurrency is not None),
    Feature("map", "map node (fan-out over a list)", (N, "DAG template, task `withParam`"),
            (N, "Map state, ItemsPath"), lambda wf, n: n.kind is NodeKind.MAP),
    Feature("map_outputs", "a map node's outputs handed to its dependents (one per item, in item order)",
            (A, "not through Argo: a consumer is given `--mapped <map>=<items path>` and derives the items' log "
                "keys from the list the map fanned out over (an aggregated list of keys would be one argument "
                "growing with the fan-out, past Linux's 128 KiB for one string at about 1,400 items); only log "
                "keys, never the outputs themselves; an idempotency key cannot name a map"),
            (N, "the Map state's output array"),
            lambda wf, n: n.kind is NodeKind.MAP and any(d.source == n.id for d in wf.dependencies())),
    Feature("map_concurrency", "max_concurrency of a map node", (N, "`parallelism` of the map's DAG template"),
            (N, "MaxConcurrency"), lambda wf, n: n.kind is NodeKind.MAP and n.max_concurrency is not None),
    Feature("retry", "retry.max_attempts", (N, "retryStrategy.limit = max_attempts - 1"),
            (N, "Retry[].MaxAttempts = max_attempts - 1"), _retry(lambda r: True)),
    Feature("retry_on", "retry.retry_on (error names)",
            (A, "retryPolicy + expression on exit code 75 or 143 (transient) / deadline message (Timeout)"),
            (N, "Retry[].ErrorEquals"), _retry(lambda r: bool(r.retry_on))),
    Feature("backoff_fixed", "fixed backoff", (N, "backoff.factor 1"), (N, "BackoffRate 1.0"),
            _retry(lambda r: r.backoff.kind is BackoffKind.FIXED)),
    Feature("backoff_linear", "linear backoff", (A, "exponential with factor 1 (kind in annotation)"),
            (A, "BackoffRate 1.0 (kind in Comment)"), _retry(lambda r: r.backoff.kind is BackoffKind.LINEAR)),
    Feature("backoff_exponential", "exponential backoff (initial, factor)",
            (N, "backoff.duration, backoff.factor"), (N, "IntervalSeconds, BackoffRate (whole seconds >= 1)"),
            _retry(lambda r: r.backoff.kind is BackoffKind.EXPONENTIAL)),
    Feature("backoff_max", "backoff.max (cap on one delay) that no delay of the retry limit reaches",
            (A, "not rendered, and nothing lost since no delay reaches it: Argo v3.6.5 has no cap on one "
                "delay (`backoff.cap` arrived in v3.7; the v3.6.5 controller drops the field and its CLI refuses "
                "it)"), (N, "MaxDelaySeconds"),
            _retry(lambda r: r.backoff.max is not None and not _cap_binds(r))),
    Feature("backoff_max_binding", "backoff.max (cap on one delay) that a delay of the retry limit would exceed",
            (U, "Argo v3.6.5 has no cap on one delay (`backoff.cap` is a v3.7 field; `maxDuration` bounds the "
                "whole retry, not one delay)"), (N, "MaxDelaySeconds"), _retry(_cap_binds)),
    Feature("backoff_jitter", "backoff.jitter", (A, "no jitter in Argo (value in annotation)"),
            (A, "JitterStrategy FULL for 1.0, NONE for 0 (fraction in Comment)"),
            _retry(lambda r: r.backoff.jitter > 0)),
    Feature("timeout", "policy.timeout", (N, "template activeDeadlineSeconds / timeout"),
            (N, "TimeoutSeconds (whole seconds)"), lambda wf, n: (p := _policy(wf, n)) is not None
            and p.timeout is not None),
    Feature("catch", "policy.catch routes", (A, "handler task `depends: \"x.Failed\"` (no continueOn: Argo refuses "
            "it in a DAG using depends; a failed task some task consumes is no leaf, and only leaves decide the "
            "phase); error names in annotation (the handler runs after any failure). Under a `*` route the node's "
            "consumers wait on a pod-less task `x-ended` (a zero-length suspend after x either way) and are "
            "skipped by `when: tasks.x.status != Failed`, so after a caught failure they do not run and the "
            "workflow succeeds, as locally (Argo v3.6.5 gives a task that did not complete the phase of the task "
            "above it, assessDAGPhase). With routes naming errors, or on a choice node's targets, the consumers "
            "hang off the failed node: the workflow ends Failed after its failure, caught or not"),
            (N, "Catch[{ErrorEquals, Next, ResultPath}]; the runs of chained nodes downstream of a caught node sit "
                "behind a Choice `<node>/alive` that goes past them when the caught node left an error and no "
                "result, as the local runtime skips them"),
            lambda wf, n: (p := _policy(wf, n)) is not None and bool(p.catch)),
    Feature("idempotency", "policy.idempotency key",
            (A, "key passed to the step (`--idempotency-key`; a map item's ends with the item), checked against "
                "the log's idempotency records (Argo memoize needs ConfigMap create/update a stock install does "
                "not grant)"),
            (A, "key passed in the Task Parameters, checked against the log"),
            lambda wf, n: (p := _policy(wf, n)) is not None and p.idempotency is not None),
    Feature("compensation", "compensation (saga rollback)", (N, "onExit handler: `alas step compensate` "
            "when {{workflow.status}} != Succeeded, reverse commit order; the compensations' timeouts bound the one "
            "step together (activeDeadlineSeconds: each timeout times its attempts); a failed one is recorded, the "
            "rest still run, then the step fails and a transient failure is retried; the pod retries as the most "
            "patient compensation's policy says, each compensation only within its own attempts and retry_on"),
            (N, "Catch States.ALL into a reverse compensation chain ending in Fail; each compensation state has its "
                "node's Retry and TimeoutSeconds and catches into the next, so a failed one does not stop the rest"),
            lambda wf, n: wf.compensation_of(n) is not None),
    Feature("loop", "loop + loop_guard", (A, "the step iterates; max-iters / loop-deadline parameters"),
            (A, "the Task iterates; guard in Parameters"), lambda wf, n: n.loop is not None),
    Feature("on_failure", "policy.on_failure", (A, "skip: the dependents depend on `(x || x.Failed)` (Argo refuses "
            "continueOn in a DAG using depends) and read x's output from the log when it ran (`--maybe`), so a "
            "skipped node without dependents still fails the workflow; the value in annotation"),
            (A, "in Comment"), lambda wf, n: (p := _policy(wf, n)) is not None
            and p.on_failure is not OnFailure.ROLLBACK),
    Feature("params", "static node params", (N, "input parameter `params` (JSON)"),
            (N, "Task Parameters.params"), lambda wf, n: bool(n.params)),
    Feature("contracts", "input/output JSON Schemas",
            (A, "output schema passed to the step, which refuses output breaking it; input schema in annotation"),
            (A, "checked by the Task; schemas in Comment"), lambda wf, n: n.input is not None
            or n.output is not None),
    Feature("repair", "repair spec: escalation retry -> patch -> replan",
            (N, "one DAG task per rung. Retry: the node's own task's retryStrategy (exit 75 or 143, or the pod's "
                "Error phase only); then `<node>-patch` with `depends: \"<node>.Failed\"` and `<node>-replan` with "
                "`depends: \"<node>-patch.Failed\"`. No continueOn (Argo refuses it in a DAG using depends, "
                "seen on a real controller): a failed rung is consumed by the next one, so it is no leaf, and only "
                "leaves decide the phase (dag.go): the workflow fails (and onExit compensates) only when the last "
                "rung does. A rung runs `alas step <role> --rung <level>`, logs recovery.escalated and records its "
                "output under the node; consumers depend on `(<node>.Succeeded || <node>-patch.Succeeded || "
                "<node>-replan.Succeeded)` and read that one record (`--recorded`). Not expressed: a rung ending "
                "in Argo's Error phase after its last retry (pod deleted or evicted, node lost) starts no next rung "
                "(`.Failed` is false): the workflow fails and is compensated; a step killed by a signal (SIGKILL, "
                "OOM: exit 137) ends Failed and does escalate, its reason logged as unknown; a map node's items "
                "climb the ladder inside their own pods (`--repair`: a ladder per item would need a DAG per item). "
                "The two differences from the local runtime (`alas run`): (1) a map item's ladder runs inside its "
                "pod, so its rungs are no DAG tasks (locally no node has tasks; the events are the same); (2) a "
                "rung exiting 75 (transient) is retried by the rung template's retryStrategy (the node's policy: "
                "up to max_attempts tries, capped backoff) before the next rung starts, while locally each rung "
                "gets max_patches / max_replans tries and a transient error counts as one failed try, so the "
                "ladder climbs at once (runtime/recovery.py); both end on the same rung when the failure is "
                "permanent"),
            (N, "for a top-level task node, one Task state per rung. Retry: the node's Retry[]; then its Task "
                "catches States.ALL into `<node>/patch`, which catches into `<node>/replan` (Parameters.rung and "
                ".repair); every rung has the node's Retry and TimeoutSeconds, writes the node's ResultPath (the "
                "consumer reads the one result) and goes on to the node's Next, and the last carries the node's own "
                "Catch routes and the saga's. Not expressed: States.Runtime and States.DataLimitExceeded, which "
                "States.ALL does not catch, end the execution without climbing; a map item or a parallel branch "
                "climbs the ladder inside its Task (Parameters.repair)"),
            lambda wf, n: n.repair is not None),
    Feature("side_effect", "side-effect class", (A, "annotation"), (A, "Comment"),
            lambda wf, n: n.side_effect is not SideEffect.NONE),
)


def check_supported(engine: str, wf: Workflow) -> None:
    """Raise :class:`UnsupportedFeature` for the first node using a feature ``engine`` cannot express."""
    for n in wf.nodes:
        for f in MATRIX:
            status, mapping = f.support(engine)
            if status is Support.UNSUPPORTED and f.uses(wf, n):
                raise UnsupportedFeature(engine, n.id, f.key, mapping)


def matrix_json() -> list[dict[str, Any]]:
    """The matrix as JSON rows (what `alas engines matrix --json` prints)."""
    return [{"feature": f.key, "ir": f.ir, **{e: {"support": str(f.support(e)[0]), "mapping": f.support(e)[1]}
                                              for e in ENGINES}} for f in MATRIX]


def matrix_markdown() -> str:
    """The matrix as a Markdown table (what the README shows; `alas engines matrix --markdown`)."""
    lines = ["| feature | IR | " + " | ".join(ENGINES) + " |", "|---|---|" + "---|" * len(ENGINES)]
    for f in MATRIX:
        cells = [f"**{f.support(e)[0]}**: {f.support(e)[1]}".replace("|", "\\|") for e in ENGINES]
        lines.append(f"| `{f.key}` | {f.ir} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
