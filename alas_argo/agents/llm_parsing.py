"""Strict parsing of a model's answer into proposed operations, tolerating the usual wrapping.

Tolerated, each with a note: a code fence around the JSON, prose before or after it, a top-level list instead
of ``{"operations": [...]}``, a single operation object, integral floats (``12.0``), a missing ``job`` field
(the agent's own job is the only one it may propose for). Never done: inventing a value the model did not
give. An operation without a machine, start or end is dropped (and noted), not completed; a truncated answer
yields only the operation records that arrived complete; an answer with no JSON at all, or JSON nested deeper
than Python can decode (a runaway ``[[[[...``), is a :class:`ParseError`, so the agent re-asks instead of
crashing. Wrong machines, wrong durations, overlaps and precedence violations are kept as given:
they are the validator's to flag; :func:`review_operations` only writes notes a re-ask can quote.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from alas_argo import json_limits
from alas_argo.agents.contracts import JobContext, ProposedOperation
from alas_argo.errors import ContractError

__all__ = ["ParseError", "ParsedAnswer", "extract_json", "parse_answer", "review_operations"]

_FIELDS = ("job", "step", "machine", "start", "end")
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
#: Answers longer than this are not scanned character by character (a runaway model, not a schedule).
_MAX_SCAN = 200_000
#: Characters of a run of openers (with the blanks between them) skipped after a RecursionError.
_RUN = frozenset("[{ \t\r\n")


class ParseError(ContractError):
    """The answer holds no usable JSON at all (prose only, empty, or nothing parseable)."""


@dataclass
class ParsedAnswer:
    """Operations read from an answer, and what had to be tolerated or dropped to read them."""

    operations: list[ProposedOperation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _decode_all(text: str, opener: str) -> list[tuple[Any, int]]:
    """Every complete JSON value starting at an ``opener`` character, left to right, not nested twice.

    Each comes with the length of the text it was decoded from.
    """
    decoder = json.JSONDecoder()
    found: list[tuple[Any, int]] = []
    i = text.find(opener)
    while 0 <= i < len(text):
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:  # JSONDecodeError, and int()'s bare ValueError on an integer past 4,300 digits
            i = text.find(opener, i + 1)
            continue
        except RecursionError:
            # Nested past the recursion limit: every opener of this run would fail the same way, one
            # recursion limit deep each (quadratic on a runaway ``[[[[...``), so the run is skipped whole.
            run = i
            while run < len(text) and text[run] in _RUN:
                run += 1
            i = text.find(opener, run)
            continue
        found.append((value, end - i))
        i = text.find(opener, end)
    return found


def _looks_like_ops(value: Any) -> bool:
    if isinstance(value, dict):
        # A container of operations, not one operation record: those are salvaged separately.
        return "operations" in value or any(_looks_like_ops(v) for v in value.values() if isinstance(v, list))
    return isinstance(value, list) and bool(value) and all(isinstance(v, dict) for v in value)


def extract_json(text: str) -> tuple[Any, list[str]]:
    """The JSON document inside a model's answer, plus notes on any wrapping that was stripped.

    Raises:
        ParseError: When the answer is empty, too long, or holds no JSON value that looks like operations.
    """
    stripped = text.strip()
    if not stripped:
        raise ParseError("the model's answer is empty")
    if len(stripped) > _MAX_SCAN:
        raise ParseError(f"the model's answer is {len(stripped)} characters long: not a schedule")
    try:
        return json_limits.loads(stripped), []
    except json.JSONDecodeError:  # nesting too deep for json included (json_limits.loads)
        pass
    for block in _FENCE.findall(stripped):
        try:
            return json_limits.loads(block.strip()), ["answer wrapped in a code fence"]
        except json.JSONDecodeError:
            continue
    for opener in "{[":
        candidates = [(v, span) for v, span in _decode_all(stripped, opener) if _looks_like_ops(v)]
        if candidates:
            # The largest plausible value is the schedule; smaller ones are usually quoted examples. Sized by the
            # text it came from: encoding it again to measure it can exceed the recursion limit that decoding it
            # stayed under (a value nested a few levels short of the limit).
            best, _ = max(candidates, key=lambda c: c[1])
            return best, ["prose around the JSON ignored"]
    records = [v for v, _ in _decode_all(stripped, "{") if isinstance(v, dict) and "step" in v]
    if records:
        return {"operations": records}, [
            f"answer is not one complete JSON document (truncated?): kept the {len(records)} operation record(s) "
            "that arrived whole"]
    if "{" in stripped or "[" in stripped:
        raise ParseError("the model's answer holds no complete JSON (truncated or malformed)")
    raise ParseError("the model answered in prose without any JSON")


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _operation_list(doc: Any, notes: list[str]) -> list[Any]:
    if isinstance(doc, list):
        notes.append("top-level list accepted as the operations")
        return doc
    if isinstance(doc, dict):
        if isinstance(doc.get("operations"), list):
            return list(doc["operations"])
        if "step" in doc:
            notes.append("a single operation object accepted")
            return [doc]
        for name, value in doc.items():
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                notes.append(f"operations read from the {name!r} field")
                return value
    raise ParseError("the JSON in the answer has no list of operations")


def parse_answer(text: str, *, job: int | None) -> ParsedAnswer:
    """Read the operations a job agent proposed for ``job`` from a model's answer.

    Args:
        text: The raw answer text.
        job: The agent's job; operations for other jobs are dropped (outside its bounded context).
            None (the supervisor) accepts every job but requires the ``job`` field.

    Raises:
        ParseError: When no JSON with a list of operations can be found at all.
    """
    doc, notes = extract_json(text)
    items = _operation_list(doc, notes)
    ops: list[ProposedOperation] = []
    filled_job = 0
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            notes.append(f"operation #{index} is not an object: dropped")
            continue
        values: dict[str, int] = {}
        problems: list[str] = []
        for name in _FIELDS:
            if name not in item:
                if name == "job" and job is not None:
                    values["job"] = job
                    filled_job += 1
                    continue
                problems.append(f"no {name}")
                continue
            number = _as_int(item[name])
            if number is None:
                problems.append(f"{name} {item[name]!r} is not an integer")
            else:
                values[name] = number
        if problems:
            notes.append(f"operation #{index} dropped: {', '.join(problems)}")
            continue
        if job is not None and values["job"] != job:
            notes.append(f"operation #{index} is for job {values['job']}, not this agent's job {job}: dropped")
            continue
        ops.append(ProposedOperation(**values))
    if filled_job:
        notes.append(f"{filled_job} operation(s) had no job field: read as job {job}")
    if not ops:
        notes.append("no usable operation in the answer")
    return ParsedAnswer(operations=ops, notes=notes)


def review_operations(ctx: JobContext, ops: list[ProposedOperation]) -> list[str]:
    """Notes comparing proposed operations with the job's context (advice for a re-ask, not a verdict).

    The independent validator decides validity; these notes only say what the agent can see was off in
    its own job: missing, unknown or duplicate steps, machines, durations, order, release and fixed steps.
    """
    notes: list[str] = []
    steps = len(ctx.operations)
    seen: dict[int, ProposedOperation] = {}
    for op in ops:
        if not 0 <= op.step < steps:
            notes.append(f"step {op.step} does not exist (job {ctx.job} has {steps} steps)")
            continue
        if op.step in seen:
            notes.append(f"step {op.step} proposed more than once")
            continue
        seen[op.step] = op
        machine, duration = ctx.operations[op.step]
        if op.machine != machine:
            notes.append(f"step {op.step} on machine {op.machine}, but it must run on machine {machine}")
        if op.end - op.start != duration:
            notes.append(f"step {op.step} lasts {op.end - op.start}, but its duration is {duration}")
        if op.step in ctx.fixed and (op.start, op.end) != tuple(ctx.fixed[op.step]):
            notes.append(f"step {op.step} has started at {ctx.fixed[op.step][0]} and must not move")
        elif op.start < ctx.release and op.step not in ctx.fixed:
            notes.append(f"step {op.step} starts at {op.start}, before the release time {ctx.release}")
    missing = [s for s in range(steps) if s not in seen]
    if missing:
        notes.append(f"missing step(s) {missing}")
    for s in range(1, steps):
        if s in seen and s - 1 in seen and seen[s].start < seen[s - 1].end:
            notes.append(f"step {s} starts at {seen[s].start}, before step {s - 1} ends at {seen[s - 1].end}")
    for op in seen.values():
        for w in ctx.busy:
            if w.machine == op.machine and op.start < w.end and w.start < op.end and op.step not in ctx.fixed:
                notes.append(f"step {op.step} overlaps machine {w.machine}'s {w.reason} window "
                             f"[{w.start}, {w.end})")
    return notes
