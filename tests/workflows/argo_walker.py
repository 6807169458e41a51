"""A small stand-in for the Argo controller: walks a rendered Workflow / WorkflowTemplate the way Argo
would, running each container's command locally.

What it does as Argo does: DAG tasks run in dependency order (``depends`` expressions over task phases:
``.Succeeded``/``.Failed``/``.Skipped``/``.Omitted`` terms, a bare name meaning Succeeded or Skipped; a task whose
``depends`` is false is Omitted, one whose ``when`` is false Skipped, its arguments never resolved, as in dag.go's
executeDAGTask; ``{{tasks.x...}}`` resolves for the task's ancestors only, as GetTaskAncestry has it); a DAG using
``depends`` with a ``continueOn`` anywhere is refused, as Argo's validation refuses it (validate.go: "cannot use
'continueOn' when using 'depends'"); the DAG's phase is Argo v3.6's ``assessDAGPhase``: only its leaf tasks count,
and a Skipped or Omitted leaf takes the phase of the branch above it (Failed wins); parameters are substituted from
``{{workflow.*}}``, ``{{inputs.parameters.*}}``, ``{{tasks.<t>.outputs.parameters.*}}``, ``{{tasks.<t>.status}}``
and ``{{item}}``, and an
unresolvable reference fails the walk (Argo would refuse it too); ``withParam`` fans out over the JSON list; the
outputs of a fanned-out task aggregate as a JSON list; output parameters are read from the files the container
wrote (``valueFrom.path``), each pod getting its own directory for the emptyDir Argo mounts;
``retryStrategy.limit`` retries a failed pod; the ``onExit`` template runs last with ``workflow.status``; before
anything runs, the arguments are validated as Argo's submit validates them (an ``enum`` checked on the merged
parameter only, so a bare ``-p`` override escapes the template's enum as it does on Argo v3.6.5). Where real Argo
surprised us, the walker does what Argo v3.6.5 did on a real cluster (scripts/cluster): a DAG's own outputs cannot
see its fanned-out tasks' aggregated outputs.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Pod", "Walk", "Walker"]

_REF = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")


@dataclass
class Pod:
    """One container run: template, argv after the command, exit code, outputs."""

    template: str
    argv: list[str]
    exit_code: int
    outputs: dict[str, str]


@dataclass
class Walk:
    """The result of a walk."""

    status: str
    pods: list[Pod] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    #: Phase of every task of the entrypoint DAG (Succeeded, Failed, Skipped, Omitted).
    phases: dict[str, str] = field(default_factory=dict)


class Walker:
    """Walk ``doc`` with ``arguments``; ``run(argv) -> exit code`` executes one container command."""

    def __init__(self, doc: dict[str, Any], run: Callable[[list[str]], int], *, name: str,
                 arguments: dict[str, str] | None = None, submitted: list[dict[str, Any]] | None = None) -> None:
        """``arguments`` are ``argo submit -p NAME=VALUE`` overrides (bare values, no enum); ``submitted`` the
        parameter objects of a submitted Workflow's ``spec.arguments`` (what `alas submit` creates)."""
        self.spec = doc["spec"]
        self.templates = {t["name"]: t for t in self.spec["templates"]}
        self.parameters = self.merged_parameters(
            [{"name": k, "value": v} for k, v in (arguments or {}).items()], submitted or [],
            (self.spec.get("arguments") or {}).get("parameters") or [])
        self.globals = {"workflow.name": name, **{f"workflow.parameters.{p['name']}": p.get("value")
                                                   for p in self.parameters}}
        self.run_container = run
        self.walk = Walk(status="Running")
        self.scratch = Path(tempfile.mkdtemp(prefix="argo-walk-"))
        # The pods' output files live here only until their values are read: removed after run(), or when a
        # walker driven template by template is collected (31 directories a suite run were left in /tmp).
        self.close = weakref.finalize(self, shutil.rmtree, self.scratch, ignore_errors=True)

    @staticmethod
    def merged_parameters(*sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The parameters Argo v3.6.5 validates: ``-p`` overrides replace a submitted parameter whole
        (workflow/util/util.go, overrideParameters: a new Parameter with name and value only), and a
        workflowTemplateRef's parameters are merged under the workflow's, first source wins by name
        (util/util.go, MergeParameters, called from ValidateWorkflow)."""
        out: dict[str, dict[str, Any]] = {}
        for source in sources:
            for p in source:
                out.setdefault(p["name"], p)
        return list(out.values())

    def validate(self) -> None:
        """Argo v3.6.5's submit-time check of the arguments (workflow/validate/validate.go,
        validateArgumentsValues, on the merged parameters): a parameter carrying an ``enum`` must have a value
        in it. Only the merged parameter counts, so a bare ``-p`` value is not checked against the template's
        enum, exactly as Argo does not.

        Raises:
            ValueError: Argo's message; Argo's server answers it and creates nothing.
        """
        for p in self.parameters:
            if "enum" not in p:
                continue
            prefix = f"spec.arguments.{p['name']}"
            if not p["enum"]:
                raise ValueError(f"{prefix}.enum should contain at least one value")
            if p.get("value") is None:
                raise ValueError(f"{prefix}.value is required")
            if p["value"] not in p["enum"]:
                raise ValueError(f"{prefix}.value should be present in {prefix}.enum list")

    def sub(self, text: str, scope: dict[str, str]) -> str:
        def value(m: re.Match[str]) -> str:
            ref = m.group(1)
            if ref in scope:
                return scope[ref]
            if ref in self.globals and self.globals[ref] is not None:
                return str(self.globals[ref])
            raise KeyError(f"unresolved reference {{{{{ref}}}}}")
        return _REF.sub(value, text)

    def container(self, t: dict[str, Any], scope: dict[str, str]) -> tuple[str, dict[str, str]]:
        pod_dir = Path(tempfile.mkdtemp(dir=self.scratch))
        argv = [self.sub(a, scope).replace("/tmp/outputs", str(pod_dir / "outputs")) for a in t["container"]["args"]]
        attempts = 1 + int((t.get("retryStrategy") or {}).get("limit", 0))
        for _ in range(attempts):
            code = self.run_container(argv)
            outputs: dict[str, str] = {}
            if code == 0:
                for p in (t.get("outputs") or {}).get("parameters") or []:
                    path = Path(p["valueFrom"]["path"].replace("/tmp/outputs", str(pod_dir / "outputs")))
                    if not path.is_file():
                        code = 1  # Argo fails a pod whose declared output file is missing
                        break
                    outputs[p["name"]] = path.read_text(encoding="utf-8")
            self.walk.pods.append(Pod(t["name"], argv, code, outputs))
            if code == 0:
                for p in (t.get("outputs") or {}).get("parameters") or []:
                    if "globalName" in p:
                        self.walk.outputs[p["globalName"]] = outputs[p["name"]]
                return "Succeeded", outputs
            if not self.retryable((t.get("retryStrategy") or {}).get("expression"), code):
                break
        return "Failed", {}

    @staticmethod
    def retryable(expression: str | None, code: int) -> bool:
        """Argo's retryStrategy.expression for the terms the compiler writes (exit codes, the message)."""
        if expression is None:
            return True
        for term in expression.split("||"):
            m = re.fullmatch(r"\s*asInt\(lastRetry\.exitCode\) == (\d+)\s*", term)
            if m is not None and int(m.group(1)) == code:
                return True
            # A local run has neither deadline messages nor pods in Argo's Error phase (deleted, evicted).
            if m is None and "lastRetry.message" not in term and term.strip() not in (
                    "false", "lastRetry.status == 'Error'"):
                raise ValueError(f"unsupported retry expression term {term!r}")
        return False  # a local run has no deadline message

    def template(self, name: str, inputs: dict[str, str]) -> tuple[str, dict[str, str]]:
        t = self.templates[name]
        declared = {p["name"]: p.get("value") for p in (t.get("inputs") or {}).get("parameters") or []}
        values = {**{k: v for k, v in declared.items() if v is not None}, **inputs}
        missing = set(declared) - set(values)
        if missing:
            raise KeyError(f"template {name}: inputs {sorted(missing)} not given")
        scope = {f"inputs.parameters.{k}": v for k, v in values.items()}
        if "dag" in t:
            return self.dag(t, scope)
        if "suspend" in t:
            # Only the zero-length suspend the compiler writes (the task after a caught node): Argo resumes it at
            # once, with no pod (operator.go, executeSuspend).
            if str((t["suspend"] or {}).get("duration")) != "0":
                raise ValueError(f"template {name}: only a zero-length suspend is walked")
            return "Succeeded", {}
        if "steps" in t:
            raise ValueError(f"template {name}: steps templates are beyond this walker (the compiler writes none)")
        return self.container(t, scope)

    @staticmethod
    def depends_ok(expr: str, phases: dict[str, str]) -> bool:
        """Argo's ``depends``: a bare name is ``(x.Succeeded || x.Skipped || x.Daemoned)``."""
        def term(m: re.Match[str]) -> str:
            task, state = m.group(1), m.group(2)
            phase = phases[task]
            if state:
                return str(phase == {"Errored": "Error"}.get(state, state))
            return str(phase in ("Succeeded", "Skipped"))
        py = re.sub(r"([A-Za-z0-9][\w-]*)(?:\.(Succeeded|Failed|Skipped|Errored|Omitted))?", term, expr)
        return bool(eval(py.replace("&&", " and ").replace("||", " or ")))  # only True/False/and/or/() remain

    @staticmethod
    def dag_phase(tasks: dict[str, dict[str, Any]], phases: dict[str, str]) -> str:
        """Argo v3.6's assessDAGPhase (workflow/controller/dag.go): the leaf tasks decide; a leaf that did not
        complete (Skipped or Omitted: `NodePhase.Completed` is Succeeded, Failed or Error only) takes its
        branch's phase, Failed or Error preferred. Seen on the real controller: a consumer of a caught failure,
        Skipped by its `when` under the failed task, failed the workflow."""
        parents = {n: set(re.findall(r"([A-Za-z0-9][\w-]*)(?:\.\w+)?", x.get("depends", ""))) for n, x in tasks.items()}
        leaves = [n for n in tasks if not any(n in p for p in parents.values())]

        def branch(n: str) -> str:
            if phases[n] not in ("Omitted", "Skipped"):
                return phases[n]
            above = [branch(p) for p in parents[n]]
            return next((p for p in above if p in ("Failed", "Error")), "Succeeded")

        for leaf in leaves:
            phase = branch(leaf)
            if phase in ("Failed", "Error"):
                return phase
        return "Succeeded"

    @staticmethod
    def ancestors(name: str, tasks: dict[str, dict[str, Any]]) -> set[str]:
        """Every task ``name`` depends on, directly or not (Argo's common.GetTaskAncestry)."""
        out: set[str] = set()
        todo = [name]
        while todo:
            for d in re.findall(r"([A-Za-z0-9][\w-]*)(?:\.\w+)?", tasks[todo.pop()].get("depends", "")):
                if d not in out:
                    out.add(d)
                    todo.append(d)
        return out

    @classmethod
    def when_ok(cls, expr: str) -> bool:
        """Argo's ``when`` (govaluate, after substitution) for the forms the compiler writes: ``||`` and ``&&`` of
        comparisons, parenthesized or negated (``!(...)``); a comparison is ``'a' == 'b'`` / ``'a' != 'b'``, or
        numeric, ``1 >= 2`` (as govaluate compares numbers; an ordering of a non-number is an error there, and
        here)."""
        for op, combine in (("||", any), ("&&", all)):
            parts = cls.split_top(expr, op)
            if len(parts) > 1:
                return combine(cls.when_ok(p) for p in parts)
        e = expr.strip()
        if e.startswith("!(") and cls.wrapped(e[1:]):
            return not cls.when_ok(e[2:-1])
        if cls.wrapped(e):
            return cls.when_ok(e[1:-1])
        return cls.compare(e)

    @staticmethod
    def wrapped(expr: str) -> bool:
        """Whether one pair of parentheses encloses all of ``expr``."""
        depth = 0
        for i, c in enumerate(expr):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0 and i < len(expr) - 1:
                return False
        return expr.startswith("(") and depth == 0

    @staticmethod
    def split_top(expr: str, op: str) -> list[str]:
        """``expr`` split at ``op`` outside parentheses."""
        parts, depth, start, i = [], 0, 0, 0
        while i < len(expr):
            if depth == 0 and expr.startswith(op, i):
                parts.append(expr[start:i])
                start = i = i + len(op)
                continue
            depth += {"(": 1, ")": -1}.get(expr[i], 0)
            i += 1
        return [*parts, expr[start:]]

    @staticmethod
    def compare(expr: str) -> bool:
        m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*(>=|<=|>|<|==|!=)\s*(-?\d+(?:\.\d+)?)\s*", expr)
        if m is not None:
            a, op, b = float(m.group(1)), m.group(2), float(m.group(3))
            return {">=": a >= b, "<=": a <= b, ">": a > b, "<": a < b, "==": a == b, "!=": a != b}[op]
        m = re.fullmatch(r"\s*'?([^'!=<>]*?)'?\s*(==|!=)\s*'?([^'!=<>]*?)'?\s*", expr)
        if m is None:
            raise ValueError(f"unsupported when {expr!r}")
        return (m.group(1) == m.group(3)) == (m.group(2) == "==")

    def dag(self, t: dict[str, Any], scope: dict[str, str]) -> tuple[str, dict[str, str]]:
        tasks = {x["name"]: x for x in t["dag"]["tasks"]}
        if any("depends" in x for x in tasks.values()) and any("continueOn" in x for x in tasks.values()):
            # What Argo's validation answers on submit (workflow/validate/validate.go).
            raise ValueError(f"templates.{t['name']} cannot use 'continueOn' when using 'depends'. Instead use "
                             "'dep-task.Failed'/'dep-task.Errored'")
        phases: dict[str, str] = {}
        local = dict(scope)
        while len(phases) < len(tasks):
            ready = [n for n, x in tasks.items() if n not in phases and all(
                d in phases for d in re.findall(r"([A-Za-z0-9][\w-]*)(?:\.\w+)?", x.get("depends", "")))]
            if not ready:
                raise RuntimeError("DAG deadlock")
            name = ready[0]
            task = tasks[name]
            if task.get("depends") and not self.depends_ok(task["depends"], phases):
                phases[name] = local[f"tasks.{name}.status"] = "Omitted"
                continue
            # Only the task's ancestors' outputs are in its scope (dag.go, buildLocalScopeFromTask).
            seen = self.ancestors(name, tasks)
            visible_to = {k: v for k, v in local.items()
                          if not k.startswith("tasks.") or k.split(".")[1] in seen}
            if "when" in task and not self.when_ok(self.sub(task["when"], visible_to)):
                phases[name] = local[f"tasks.{name}.status"] = "Skipped"
                continue
            args = {p["name"]: p.get("value", "") for p in (task.get("arguments") or {}).get("parameters") or []}
            if "withParam" in task:
                items = json.loads(self.sub(task["withParam"], visible_to))
                results = []
                phase = "Succeeded"
                for item in items:
                    text = item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
                    p, outs = self.template(task["template"],
                                            {k: self.sub(v, {**visible_to, "item": text}) for k, v in args.items()})
                    phase = "Failed" if p == "Failed" else phase
                    results.append(outs)
                local[f"tasks.{name}.outputs.parameters"] = json.dumps(results)
                for key in {k for r in results for k in r}:
                    local[f"tasks.{name}.outputs.parameters.{key}"] = json.dumps([r.get(key) for r in results])
            else:
                phase, outs = self.template(task["template"], {k: self.sub(v, visible_to) for k, v in args.items()})
                for k, v in outs.items():
                    local[f"tasks.{name}.outputs.parameters.{k}"] = v
            phases[name] = local[f"tasks.{name}.status"] = phase
        status = self.dag_phase(tasks, phases)
        if t["name"] == self.spec["entrypoint"]:
            self.walk.phases.update(phases)
        # As Argo v3.6.5 does (seen on a real controller): a DAG's own outputs do not see the aggregated outputs of
        # its fanned-out tasks: the whole list comes out as "[]" and a named parameter does not resolve.
        fanned = {n for n, x in tasks.items() if "withParam" in x}
        own = {k: ("[]" if k.endswith(".outputs.parameters") else None) for k in local
               if any(k.startswith(f"tasks.{n}.outputs.parameters") for n in fanned)}
        visible = {**{k: v for k, v in local.items() if k not in own}, **{k: v for k, v in own.items() if v}}
        outputs = {p["name"]: self.sub(p["valueFrom"]["parameter"], visible)
                   for p in (t.get("outputs") or {}).get("parameters") or []} if status == "Succeeded" else {}
        return status, outputs

    def run(self) -> Walk:
        """Validate the arguments as Argo's submit does, run the entrypoint, then the exit handler; return the walk.

        Raises:
            ValueError: The submission is refused (no pod runs).
        """
        try:
            self.validate()
            status, _ = self.template(self.spec["entrypoint"], {})
            self.walk.status = status
            self.globals["workflow.status"] = status
            if "onExit" in self.spec:
                self.template(self.spec["onExit"], {})
            return self.walk
        finally:
            self.close()
