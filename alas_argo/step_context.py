"""What a step handler sees and returns: the step's input, its output, the context that reads the log.

These types are shared by :mod:`alas_argo.steps` (which runs a step) and :mod:`alas_argo.step_handlers`
(the roles it runs); they live apart from both so that the runner can import the handler table without the
handlers importing the runner back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from alas_argo import json_limits
from alas_argo.bounds import MAX_WAIT_SECONDS
from alas_argo.errors import AlasError, InputError, first_error
from alas_argo.ir.condition import Condition
from alas_argo.ir.validation import contract_problem
from alas_argo.log import ExecutionLog, Store
from alas_argo.runtime.policies import MISSING, evaluate

__all__ = ["Handler", "StepContext", "StepInput", "StepOutput", "holds", "item_value", "map_item_keys", "output_key",
           "param_value"]


class StepInput(BaseModel):
    """Everything a step is told on its command line."""

    model_config = ConfigDict(frozen=True)

    kind: str = Field(description="Step kind (the IR role): blueprint, job-agent, supervisor, commit, ...")
    node: str = Field(description="IR node id.")
    run_id: str = Field(description="Run whose log the step reads and writes.")
    scope: str = Field(description="The workflow object (Argo's workflow.name): output records are keyed by it.")
    params: dict[str, Any] = Field(default_factory=dict, description="The node's static params.")
    run_inputs: dict[str, str] = Field(default_factory=dict, description="Workflow parameters.")
    inputs: dict[str, Any] = Field(default_factory=dict, description="Dependency id -> log key (or list).")
    mapped: dict[str, str] = Field(default_factory=dict, description="Map dependency id -> the path of the list it "
                                   "fanned out over ('<node>.<param>' or 'inputs.<name>'): its items' log keys are "
                                   "derived from that list (map_item_keys), not handed over.")
    candidates: list[str] = Field(default_factory=list, description="any_of candidates (found in the log).")
    maybe: list[str] = Field(default_factory=list, description="Dependencies whose output exists only if they ran "
                             "(a gated node, one skipped on failure): read from the log when recorded.")
    exports: list[str] = Field(default_factory=list, description="Output fields also written as output parameters "
                               "(what a gate or a map of the workflow reads from this node on Argo).")
    item: Any = Field(None, description="The map item this pod handles.")
    loop_until: dict[str, Any] | None = Field(None, description="Loop condition on the output.")
    max_iters: int = Field(1, ge=1, description="Loop guard: iterations.")
    loop_deadline: float | None = Field(None, gt=0, le=MAX_WAIT_SECONDS,
                                        description="Loop guard: seconds from the first iteration.")
    choices: dict[str, Any] | None = Field(None, description="A choice node's branches and default.")
    branches: list[str] = Field(default_factory=list, description="A parallel node's branches.")
    compensations: dict[str, Any] = Field(default_factory=dict, description="Node -> its compensation.")
    compensates: list[str] = Field(default_factory=list,
                                   description="Saga steps a compensation node undoes (compensation steps).")
    status: str | None = Field(None, description="Workflow status (exit handler).")
    idempotency_key: str | None = Field(None, description="Rendered idempotency key of the node.")
    output_contract: dict[str, Any] | None = Field(None, description="JSON Schema the output must satisfy.")
    repair: dict[str, Any] | None = Field(None, description="The node's repair spec (IR RepairSpec): after a "
                                          "permanent failure the step escalates to its patch role, then its replan "
                                          "role.")
    rung: str | None = Field(None, description="The ladder's level this step runs as its own task (patch, replan): "
                             "it climbs to that level only, because the level below failed.")

    @field_validator("loop_until")
    @classmethod
    def _a_condition(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # Checked before the handler runs: a malformed condition found after the first iteration would have let
        # that iteration's writes happen first.
        if value is not None:
            try:
                Condition.model_validate(value)
            except ValidationError as e:
                loc, msg = first_error(e)
                raise ValueError(f"{loc}: {msg}" if loc else msg) from None
        return value

    @field_validator("output_contract")
    @classmethod
    def _a_contract(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # Checked as the IR checks a node's contract: a schema jsonschema cannot use failed only after the role
        # ran, with a SchemaError or TypeError traceback (exit 1) instead of a refusal.
        if value is not None and (problem := contract_problem(value, "the output contract")) is not None:
            raise ValueError(problem)
        return value


@dataclass
class StepOutput:
    """The output document (stored in the log) and the Argo output parameters (written as files)."""

    doc: dict[str, Any]
    params: dict[str, str] = field(default_factory=dict)


def output_key(scope: str, node: str, item: Any = None) -> str:
    """The log key of a node's (or a map item's) output record."""
    suffix = "" if item is None else f"/{json.dumps(item, sort_keys=True, separators=(',', ':'))}"
    return f"output/{scope}/{node}{suffix}"


def item_value(text: str) -> Any:
    """The map item a pod is given as ``--item TEXT``: Argo substitutes ``{{item}}`` as JSON for an object or a
    list and as bare text for a string, number or bool; JSON where it parses, else the text itself."""
    try:
        return json_limits.loads(text)
    except json.JSONDecodeError:
        return text


def map_item_keys(log: ExecutionLog, scope: str, node: str, items: str, run_inputs: dict[str, str]) -> list[str]:
    """The log keys of map ``node``'s item outputs, in item order, derived from the list it fanned out over
    (``items``: ``'<source node>.<output parameter>'``, read from the source's output record, or
    ``'inputs.<name>'``, a workflow parameter).

    Argo could hand the keys over as one aggregated parameter, but a pod's command line (and the template Argo
    passes its executor in one environment variable) holds at most 128 KiB per string: about 1,400 bench cases.
    Derived here, the consumer's arguments do not grow with the fan-out.

    Raises:
        InputError: The list is not recorded, not JSON, or not a list.
    """
    root, _, name = items.partition(".")
    where = f"map {node}, items {items!r}"
    if root == "inputs":
        text = run_inputs.get(name)
    else:
        record = log.idempotency_get(output_key(scope, root))
        text = None if record is None else (record.get("params") or {}).get(name)
    if text is None:
        raise InputError(f"the list map {node} fanned out over is not recorded", where=where)
    try:
        values = json_limits.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"the list map {node} fanned out over is not JSON: {e.msg}", where=where) from None
    if not isinstance(values, list):
        raise InputError(f"map {node} fanned out over a {type(values).__name__}, not a list", where=where)
    # Each item as its pod saw it, so the key is the one the pod recorded: Argo substitutes a string bare, which
    # the pod's item_value parses ("1" -> 1); any other JSON value comes back as itself.
    return [output_key(scope, node, item_value(v) if isinstance(v, str) else v) for v in values]


class StepContext:
    """What a step handler sees: its input, the log, and readers for dependency outputs."""

    def __init__(self, inp: StepInput, store: Store, log: ExecutionLog) -> None:
        self.input, self.store, self.log = inp, store, log
        self.previous: dict[str, Any] | None = None
        self.iteration = 0
        #: "run", or the escalation level being tried ("patch", "replan").
        self.level = "run"
        #: The error being recovered from, at an escalation level.
        self.failure: AlasError | None = None
        # The any_of winner, looked up once: Argo starts the join when one candidate succeeded, and a candidate
        # that ends later must not change what this step read between two of its reads.
        self._winner: tuple[str | None] | None = None
        self._maybe_ran: list[str] | None = None  # the same for the maybe dependencies that ran

    def read(self, key: str) -> dict[str, Any]:
        """The output record stored under ``key``."""
        doc = self.log.idempotency_get(key)
        if doc is None:
            raise InputError(f"no output recorded under {key!r}", where=f"run {self.log.run_id}")
        return doc

    def dep(self, name: str) -> Any:
        """Output of dependency ``name``: one document, or a list for a map (its items' keys derived from the list
        it fanned out over, or, from a workflow rendered before that, aggregated by Argo)."""
        ref = self.ref(name)
        if ref is None:
            raise InputError(f"step {self.input.node} has no input {name!r}", where=f"node {self.input.node}")
        if isinstance(ref, list):
            return [self.read(r["key"] if isinstance(r, dict) else r) for r in ref]
        return self.read(ref)

    def ref(self, name: str) -> Any:
        """The log key of dependency ``name``'s output, a list of keys for a map, None when not an input."""
        if name in self.input.mapped:
            return map_item_keys(self.log, self.input.scope, name, self.input.mapped[name], self.input.run_inputs)
        if name not in self.input.inputs and ((name in self.input.candidates and self.winner() == name)
                                              or name in self._ran()):
            return output_key(self.input.scope, name)
        return self.input.inputs.get(name)

    def _ran(self) -> list[str]:
        """The ``maybe`` dependencies this workflow recorded an output for (looked up once per step)."""
        if self._maybe_ran is None:
            self._maybe_ran = [n for n in self.input.maybe
                               if self.log.idempotency_get(output_key(self.input.scope, n)) is not None]
        return self._maybe_ran

    def output(self, name: str) -> Any:
        """Node ``name``'s output as the local runtime holds it: its document, a map's list of documents, or
        ``MISSING`` when this workflow recorded none. A dependency is read as handed over; any other node of the
        workflow (a choice may read any node that ran, as it does locally) from its record in the log."""
        if name in self.dep_names():
            found = self.dep(name)
            return [r["doc"] for r in found] if isinstance(found, list) else found["doc"]
        record = self.log.idempotency_get(output_key(self.input.scope, name))
        return MISSING if record is None else record["doc"]

    def dep_names(self) -> list[str]:
        """Every dependency this step was given, in the order given; an any_of join's is the candidate that won
        (the one dependency the local runtime hands such a node); a ``maybe`` one when it ran."""
        names = [*self.input.inputs, *(n for n in self.input.mapped if n not in self.input.inputs)]
        won = self.winner()
        names += [won] if won is not None and won not in names else []
        return names + [n for n in self._ran() if n not in names]

    def map_deps(self) -> list[str]:
        """The dependencies that are maps (their outputs a list), in the order given."""
        return [n for n in self.dep_names() if n in self.input.mapped or isinstance(self.input.inputs[n], list)]

    def candidate(self) -> tuple[str, dict[str, Any]]:
        """(id, output) of the any_of candidate that ran, in declared order."""
        for c in self.input.candidates:
            doc = self.log.idempotency_get(output_key(self.input.scope, c))
            if doc is not None:
                return c, doc
        raise InputError("no any_of candidate has an output", where=f"node {self.input.node}")

    def winner(self) -> str | None:
        """The any_of candidate that ran (:meth:`candidate`), None when this step joins none or none of its
        candidates recorded one output (a map's items are recorded apart, as a map dependency would be)."""
        if self._winner is None:
            try:
                self._winner = (self.candidate()[0],) if self.input.candidates else (None,)
            except InputError:
                self._winner = (None,)
        return self._winner[0]

    def run_input(self, name: str, default: str | None = None) -> str:
        """A workflow parameter (InputError when missing and no default)."""
        value = self.input.run_inputs.get(name, default)
        if value is None:
            raise InputError(f"missing workflow parameter {name!r}", where=f"node {self.input.node}")
        return value

    def json_input(self, name: str, default: Any) -> Any:
        """A workflow parameter holding JSON."""
        raw = self.input.run_inputs.get(name)
        if raw in (None, ""):
            return default
        try:
            return json_limits.loads(str(raw))
        except json.JSONDecodeError as e:
            raise InputError(f"workflow parameter {name!r} is not JSON: {e.msg}", where=f"node {self.input.node}") \
                from None


Handler = Callable[[StepContext], StepOutput]


def param_value(value: Any) -> str:
    """An output field as an Argo output parameter: a string as itself (a gate compares it quoted), any other
    value as compact JSON (a number bare, a list as the JSON ``withParam`` fans out over)."""
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def holds(cond: dict[str, Any], doc: Any) -> bool:
    """An IR condition (JSON form, path rooted at ``output``) on a step's output, decided as the local runtime
    decides it (:func:`alas_argo.runtime.policies.evaluate`), so a loop or a choice takes the same turn on every
    engine: a missing path and incomparable values (``None < 3``) are false, ``in`` needs a list, and a path
    may index a list. ``doc`` may be ``MISSING`` (no output at all: every path under it is missing).

    Raises:
        InputError: ``cond`` is not an IR condition.
    """
    try:
        condition = Condition.model_validate(cond)
    except ValidationError as e:
        loc, msg = first_error(e)
        raise InputError(msg, where=f"condition {loc}".strip()) from None
    return evaluate(condition, {} if doc is MISSING else {"output": doc})
