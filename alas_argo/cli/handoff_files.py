"""The files and the message of the human fallback (:mod:`alas_argo.pipeline.handoff`), and reading the
edited plan back for ``alas run --manual-plan``."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from alas_argo.cli.app import write_json_file
from alas_argo.errors import InputError, first_error
from alas_argo.file_names import read_limited
from alas_argo.json_limits import load_json
from alas_argo.jssp.schedule import Schedule
from alas_argo.log import ExecutionLog

__all__ = ["read_manual_plan", "resume_command", "write_handoff"]


def resume_command(run_id: str, plan: Path, argv: list[str] | None = None) -> str:
    """The command that resumes the run with the edited plan: this command's arguments, the run id kept."""
    args = list(sys.argv[1:] if argv is None else argv)
    kept: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("--run-id", "--manual-plan"):
            skip = True
            continue
        if a.startswith(("--run-id=", "--manual-plan=")):
            continue
        kept.append(a)
    return shlex.join(["alas", *kept, "--run-id", run_id, "--manual-plan", str(plan)])


def write_handoff(doc: dict[str, Any], directory: Path, run_id: str, argv: list[str] | None = None) -> str:
    """Write ``handoff.json`` and ``best_plan.json`` (when there is one) to ``directory``; the message."""
    plan_path = directory / "best_plan.json"
    best = doc["best"]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if best["plan"] is not None:
            write_json_file(plan_path, best["plan"])
        command = resume_command(run_id, plan_path, argv)
        write_json_file(directory / "handoff.json", {k: v for k, v in doc.items() if k != "best"} | {
            "best_plan": best["source"], "best_plan_violations": best["violations"], "resume": command})
    except OSError as e:
        raise InputError(f"cannot write the human fallback's files: {e.strerror or e}", where=str(directory)) from None
    shown = "none" if best["plan"] is None else f"{best['source']} -> {plan_path}" + (
        "" if best["violations"] is None else f" ({best['violations']} violation(s))")
    return (f"human fallback: {doc['reason']}\n  best plan so far: {shown}\n"
            f"  edit it, then resume: {command}")


def read_manual_plan(path: Path, log: ExecutionLog, *, resumed: bool) -> dict[str, Any]:
    """The edited plan as a schedule document (checked for shape only; the run's validator judges it).

    Raises:
        InputError: Not a run to resume, an unreadable file, or not a schedule.
    """
    if not resumed:
        raise InputError("--manual-plan resumes a run that handed over to a person: give its --run-id")
    try:
        doc = load_json(read_limited(path), where=str(path))
        return Schedule.model_validate(doc).to_json()
    except OSError as e:
        raise InputError(f"cannot read the plan: {e.strerror or e}", where=str(path)) from None
    except ValidationError as e:
        loc, msg = first_error(e)
        raise InputError(f"not a schedule: {loc}: {msg}", where=str(path)) from None
