"""The project's own lint of Argo documents: the references Argo resolves only at run time.

Checks: the entrypoint and ``onExit`` name templates; template and task names are unique; every task's
template exists; ``depends`` names tasks of the same DAG; every ``{{inputs.parameters.x}}`` a template uses
is declared; every ``{{workflow.parameters.x}}`` is a workflow argument; task arguments match the declared
inputs of their template (required ones given, no unknown ones); every ``{{tasks.x.outputs.parameters.y}}``
names an ancestor of this task (a task it depends on, directly or through others, as Argo resolves it) and an
output its template declares; ``withParam`` reads a declared
source and ``{{item}}`` appears only in fan-out tasks; every ``{{`` opens a reference (Argo refuses one never
closed, or ``{{{x}}}``); a workflow parameter's ``enum`` is not empty and holds its value.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from alas_argo.engines.argo_names import substitutions

__all__ = ["LintProblem", "lint_argo"]

_GLOBALS = ("workflow.name", "workflow.namespace", "workflow.uid", "workflow.status", "workflow.failures",
            "workflow.duration", "workflow.creationTimestamp")


@dataclass(frozen=True)
class LintProblem:
    """One broken reference; ``where`` is a template (and task) name."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


_STRAY = "\0"  # marks an opening that starts no reference among the references _refs returns


def _refs(value: Any) -> list[str]:
    refs, strays = substitutions(json.dumps(value))
    return refs + [_STRAY + s.split('"')[0] for s in strays]  # the opening's own string, not the JSON after it


def _declared(t: dict[str, Any], side: str) -> dict[str, dict[str, Any]]:
    return {p["name"]: p for p in (t.get(side) or {}).get("parameters") or []}


def _depends_on(task: dict[str, Any]) -> set[str]:
    names = set(re.findall(r"([A-Za-z0-9][\w-]*)(?:\.\w+)?", task.get("depends") or ""))
    return names | set(task.get("dependencies") or [])


def _ancestors(name: str, tasks: dict[str, Any]) -> set[str]:
    seen: set[str] = set()
    todo = [name]
    while todo:
        for d in _depends_on(tasks.get(todo.pop()) or {}):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen - {name}


class _Linter:
    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.out: list[LintProblem] = []
        self.at = "spec"

    def problem(self, where: str, message: str) -> None:
        self.out.append(LintProblem(where, message))

    def check_refs(self, where: str, refs: list[str], inputs: set[str], *, tasks: dict[str, Any] | None = None,
                   deps: set[str] | None = None, item: bool = False) -> None:
        for ref in refs:
            if ref.startswith(_STRAY):
                self.problem(where, f"holds a '{{{{' that opens no reference (Argo refuses the template): "
                                    f"{ref[len(_STRAY):]!r}")
            elif ref.startswith("inputs.parameters."):
                if ref.split(".", 2)[2] not in inputs:
                    self.problem(where, f"uses undeclared input parameter {ref!r}")
            elif ref.startswith("workflow.parameters."):
                if ref.split(".", 2)[2] not in self.wf_params:
                    self.problem(where, f"uses undeclared workflow parameter {ref!r}")
            elif ref.startswith("tasks.") and tasks is not None:
                self.check_task_ref(where, ref, tasks, deps or set())
            elif ref == "item" or ref.startswith("item."):
                if not item:
                    self.problem(where, "uses {{item}} outside a withParam/withItems task")
            elif ref.startswith(("inputs.", "outputs.", "pod.", "node.", "retries", "lastRetry")) or ref in _GLOBALS:
                continue
            elif not ref.startswith("tasks."):
                self.problem(where, f"unknown reference {{{{{ref}}}}}")

    def check_task_ref(self, where: str, ref: str, tasks: dict[str, Any], deps: set[str]) -> None:
        parts = ref.split(".")
        name = parts[1]
        if name not in tasks:
            self.problem(where, f"references unknown task {name!r}")
            return
        if name not in deps:
            self.problem(where, f"reads outputs of task {name!r} without depending on it")
        if len(parts) == 5 and parts[2:4] == ["outputs", "parameters"]:
            target = self.templates.get(tasks[name].get("template"), {})
            if parts[4] not in _declared(target, "outputs"):
                self.problem(where, f"task {name!r} has no output parameter {parts[4]!r}")

    def dag(self, name: str, t: dict[str, Any]) -> None:
        inputs = set(_declared(t, "inputs"))
        tasks: dict[str, Any] = {}
        for task in t["dag"].get("tasks") or []:
            if task.get("name") in tasks:
                self.problem(name, f"duplicate task name {task.get('name')!r}")
            tasks[task.get("name")] = task
        if any("depends" in x for x in tasks.values()):
            for tname, task in tasks.items():
                if "continueOn" in task:  # Argo's validation refuses the workflow on submit (validate.go)
                    self.problem(f"{name}/{tname}", "cannot use 'continueOn' when the DAG uses 'depends': consume "
                                 "the failure with 'task.Failed' in the dependents' depends instead")
        for tname, task in tasks.items():
            where = f"{name}/{tname}"
            target = self.templates.get(task.get("template"))
            if target is None:
                self.problem(where, f"template {task.get('template')!r} does not exist")
                continue
            deps = _depends_on(task)
            for d in sorted(deps - set(tasks)):
                self.problem(where, f"depends on unknown task {d!r}")
            # Argo resolves {{tasks.x...}} for every ancestor of the task, not only its direct dependencies
            # (common.GetTaskAncestry): a ladder's rung reads the inputs of the node whose failure started it.
            deps = _ancestors(tname, tasks)
            fan_out = "withParam" in task or "withItems" in task
            self.check_refs(where, _refs({k: v for k, v in task.items() if k != "withParam"}), inputs, tasks=tasks,
                            deps=deps, item=fan_out)
            if "withParam" in task:
                src = _refs(task["withParam"])
                if len(src) != 1:
                    self.problem(where, "withParam must be exactly one {{...}} reference")
                else:
                    self.check_refs(where, src, inputs, tasks=tasks, deps=deps)
            given = {p["name"] for p in (task.get("arguments") or {}).get("parameters") or []}
            declared = _declared(target, "inputs")
            for p in sorted(given - set(declared)):
                self.problem(where, f"passes argument {p!r} that template {target['name']!r} does not declare")
            for p, decl in declared.items():
                if p not in given and "value" not in decl and "default" not in decl:
                    self.problem(where, f"does not pass required input {p!r} of template {target['name']!r}")

    def run(self) -> list[LintProblem]:
        try:
            self.spec: dict[str, Any] = self.doc.get("spec") or {}
            self.templates = {t.get("name"): t for t in self.spec.get("templates") or []}
            self.wf_params = set(_declared(self.spec, "arguments"))
            return self.check()
        except (AttributeError, KeyError, TypeError) as e:
            # A shape Argo's schema refuses (a parameter without a name, ``dag: null``, a task that is no
            # mapping): one problem naming the template, not a traceback out of ``alas engines lint``.
            self.problem(self.at, f"is not a well-formed Argo document ({type(e).__name__}: {e})")
            return self.out

    def check(self) -> list[LintProblem]:
        names = [t.get("name") for t in self.spec.get("templates") or []]
        for n in sorted({n for n in names if names.count(n) > 1}):
            self.problem(str(n), "duplicate template name")
        for field in ("entrypoint", "onExit"):
            if field in self.spec and self.spec[field] not in self.templates:
                self.problem("spec", f"{field} {self.spec[field]!r} is not a template")
        if "entrypoint" not in self.spec:
            self.problem("spec", "no entrypoint")
        for name, p in _declared(self.spec, "arguments").items():
            # As Argo's validation of the arguments: an enum lists at least one value, the value among them.
            if "enum" in p and not p["enum"]:
                self.problem("spec", f"workflow parameter {name!r} has an empty enum")
            elif "enum" in p and "value" in p and str(p["value"]) not in [str(e) for e in p["enum"]]:
                self.problem("spec", f"workflow parameter {name!r}: value {p['value']!r} is not one of its enum")
        for name, t in self.templates.items():
            self.at = str(name)
            inputs = set(_declared(t, "inputs"))
            if "dag" in t:
                self.dag(name, t)
                self.check_refs(name, _refs(t.get("outputs")), inputs, tasks={
                    x["name"]: x for x in t["dag"].get("tasks") or []}, deps={
                    x["name"] for x in t["dag"].get("tasks") or []})
            else:
                self.check_refs(name, _refs({k: v for k, v in t.items() if k != "inputs"}), inputs)
        return self.out


def lint_argo(doc: dict[str, Any]) -> list[LintProblem]:
    """Every broken reference of an Argo Workflow / WorkflowTemplate document (empty when clean); a document of
    a shape Argo's schema refuses is one problem naming the template, not an exception."""
    return _Linter(doc).run()
