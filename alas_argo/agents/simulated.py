"""A declared, seeded stand-in for an LLM endpoint: answers the planner prompts with a stated error model.

Nothing here pretends to be a model. :class:`SimulatedTransport` is a
:class:`~alas_argo.agents.llm_client.ChatTransport`: it reads the JSON context every prompt carries (after
``CONTEXT:``), computes the correct answer to the question asked (the earliest feasible chain of one job
around its busy windows; for a whole instance, jobs placed one after another), then corrupts each answered
entry independently with probability ``entry_error_rate * (1 - correction_rate) ** attempt``:

- ``attempt`` is the agent's attempt (0 first, the feedback round after that), so every round of validator
  feedback removes a share ``correction_rate`` of the mistakes the agent would otherwise make;
- the kind of a mistake is drawn from ``kind_weights`` (precedence, machine overlap, missing or duplicated
  operation, wrong machine, wrong duration), the violation kinds the ALAS seed's repair trace names.

The default total rate, 0.36, is the seed's trace (88 violations in 244 schedule entries, §B.3); the split
between kinds and the correction rate 0.5 are this project's assumptions, stated in :class:`ErrorModel`
and printed with every table that uses the simulator. Because the answers travel through the same
:class:`~alas_argo.agents.llm.LlmPlanner` as real ones, they are parsed, recorded, replayed and accounted
(tokens estimated from the prompt text at four characters a token, flagged ``estimated``) exactly alike.

The critic of the planner/critic baseline is simulated too: it notices each true violation with
probability ``critic_detection_rate`` (self-validation is unreliable, SagaLLM §2).

After a disruption the prompts carry the reveal time, the started operations and the machines' downtime
(a job agent's as ``release``, ``fixed`` and busy windows; a whole-instance prompt as ``release``, ``fixed``
and ``downtime``): the correct answer honours them, and the same error model corrupts it (copied started
operations included). A ``stream`` keeps those answers' draws apart from the static plan's.
"""

from __future__ import annotations

import json
import random
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.agents.heuristic import earliest_fit
from alas_argo.agents.llm_client import ChatResult, ExchangeKey, Message, estimate_tokens

__all__ = ["SIMULATED_MODEL", "ErrorKind", "ErrorModel", "SimulatedTransport", "context_of_messages"]

#: The model name every simulated answer reports (tables print it).
SIMULATED_MODEL = "simulated"


class ErrorKind(StrEnum):
    """The mistakes the simulated agent makes (each maps to a validator violation code)."""

    PRECEDENCE = "precedence"
    OVERLAP = "machine_overlap"
    MISSING = "missing_operation"
    DUPLICATE = "duplicate_operation"
    WRONG_MACHINE = "wrong_machine"
    WRONG_DURATION = "wrong_duration"


def _default_weights() -> dict[ErrorKind, float]:
    return {ErrorKind.OVERLAP: 0.35, ErrorKind.PRECEDENCE: 0.25, ErrorKind.WRONG_DURATION: 0.15,
            ErrorKind.MISSING: 0.10, ErrorKind.WRONG_MACHINE: 0.10, ErrorKind.DUPLICATE: 0.05}


class ErrorModel(BaseModel):
    """The simulated agent's error model (see the module doc for how it is applied)."""

    model_config = ConfigDict(frozen=True)

    entry_error_rate: float = Field(0.36, ge=0, le=1, description="Probability that an answered entry is wrong "
                                    "on a first attempt (seed §B.3: 88 violations in 244 entries).")
    kind_weights: dict[ErrorKind, float] = Field(default_factory=_default_weights,
                                                 description="Relative weight of each mistake kind.")
    correction_rate: float = Field(0.5, ge=0, le=1, description="Share of mistakes removed per round of "
                                   "feedback: the rate on attempt a is entry_error_rate * (1 - c) ** a.")
    critic_detection_rate: float = Field(0.5, ge=0, le=1, description="Probability that the simulated critic "
                                         "of the planner/critic baseline notices a true violation.")

    def rate(self, attempt: int) -> float:
        """The per-entry error probability on ``attempt``."""
        return self.entry_error_rate * (1.0 - self.correction_rate) ** max(0, attempt)

    def describe(self) -> str:
        """One line for table captions."""
        kinds = ", ".join(f"{k.value} {w:g}" for k, w in self.kind_weights.items())
        return (f"simulated LLM: {self.entry_error_rate:.0%} of entries wrong on a first answer ({kinds}), "
                f"{self.correction_rate:.0%} of mistakes corrected per feedback round, critic detects "
                f"{self.critic_detection_rate:.0%}")


def context_of_messages(messages: list[Message]) -> dict[str, Any]:
    """The JSON document after ``CONTEXT:`` in the last user message (every planner prompt carries one)."""
    users = [m.get("content", "") for m in messages if m.get("role") == "user"]
    for line in (users[-1] if users else "").splitlines():
        if line.startswith("CONTEXT:"):
            doc = json.loads(line[len("CONTEXT:"):])
            return doc if isinstance(doc, dict) else {}
    return {}



class _Chain:
    """One job's correct answer and the corruption of its entries."""

    def __init__(self, job: int, ops: list[tuple[int, int]], busy: dict[int, list[tuple[int, int]]],
                 release: int = 0, fixed: dict[int, tuple[int, int]] | None = None) -> None:
        self.job, self.ops, self.busy = job, ops, busy
        self.entries: list[dict[str, int]] = []
        ready = release
        for step, (machine, duration) in enumerate(ops):
            if fixed and step in fixed:
                start, end = fixed[step]
            else:
                start = earliest_fit(sorted(busy.get(machine, [])), max(ready, release), duration)
                end = start + duration
            self.entries.append({"job": job, "step": step, "machine": machine, "start": start, "end": end})
            ready = end

    def corrupt(self, rng: random.Random, rate: float, model: ErrorModel) -> list[dict[str, int]]:
        kinds = list(model.kind_weights)
        weights = [model.kind_weights[k] for k in kinds]
        out: list[dict[str, int]] = []
        machines = sorted({m for m, _ in self.ops})
        for step, entry in enumerate(self.entries):
            e = dict(entry)
            if not kinds or rng.random() >= rate:
                out.append(e)
                continue
            kind = rng.choices(kinds, weights)[0]
            d = e["end"] - e["start"]
            if kind is ErrorKind.MISSING:
                continue
            if kind is ErrorKind.DUPLICATE:
                out += [e, dict(e, start=e["start"] + d, end=e["end"] + d)]
                continue
            windows = self.busy.get(e["machine"], [])
            if kind is ErrorKind.OVERLAP and windows:
                s, w_end = rng.choice(windows)
                e["start"] = max(0, s + rng.randrange(max(1, w_end - s)) - d // 2)
                e["end"] = e["start"] + d
            elif kind in (ErrorKind.PRECEDENCE, ErrorKind.OVERLAP) and step > 0:
                # starts before its predecessor ends
                e["start"] = max(0, self.entries[step - 1]["end"] - max(1, d // 2))
                e["end"] = e["start"] + d
            elif kind is ErrorKind.WRONG_MACHINE:
                others = [m for m in machines if m != e["machine"]]
                e["machine"] = rng.choice(others) if others else e["machine"] + 1
            else:  # wrong duration (also where the drawn kind cannot show: the first step, no busy window)
                e["end"] = e["start"] + max(1, d + rng.choice((-1, 1)) * max(1, d // 3))
            out.append(e)
        return out


class SimulatedTransport:
    """Answers job-agent, single-agent, planner and critic prompts like an LLM with :class:`ErrorModel`.

    Args:
        model: The error model (default: the seed's rate).
        seed: Seed; an answer depends only on (seed, stream, instance, role, job, attempt), never on call order.
        stream: Names an independent stream of draws for the same seed (e.g. the re-plan after a
            disruption); the default "" draws exactly as before streams existed.
    """

    def __init__(self, model: ErrorModel | None = None, *, seed: int = 0, stream: str = "") -> None:
        self.model = model or ErrorModel()
        self.seed = seed
        self.stream = stream

    def complete(self, messages: list[Message], *, key: ExchangeKey) -> ChatResult:
        """The simulated answer to ``messages`` (see the module doc).

        A re-ask after the message gate rejected an answer (its prompt says ``message rejected``) counts as
        one more round of feedback: the rate falls once more, and the draw differs from the rejected one.
        """
        doc = context_of_messages(messages)
        regated = int(any("message rejected" in m.get("content", "") for m in messages if m.get("role") == "user"))
        salt = f"{self.stream}:" if self.stream else ""
        rng = random.Random(f"{salt}{self.seed}:{doc.get('instance')}:{key.role}:{key.job}:{key.attempt}:{regated}")
        attempt = key.attempt + regated
        if doc.get("task") == "review":
            answer: dict[str, Any] = self._review(doc, rng)
        elif "jobs" in doc:
            answer = {"operations": self._whole(doc, rng, attempt)}
        elif "operations" in doc and "job" in doc:
            answer = {"operations": self._job(doc, rng, attempt)}
        else:
            answer = {"operations": []}
        text = json.dumps(answer, separators=(",", ":"))
        prompt = estimate_tokens("".join(m.get("content", "") for m in messages))
        return ChatResult(text=text, model=SIMULATED_MODEL, prompt_tokens=prompt,
                          completion_tokens=estimate_tokens(text), estimated=True, latency_s=0.0, calls=1,
                          finish_reason="stop", extra={"simulated": True})

    def _job(self, doc: dict[str, Any], rng: random.Random, attempt: int) -> list[dict[str, int]]:
        busy: dict[int, list[tuple[int, int]]] = {}
        for w in doc.get("busy", []):
            busy.setdefault(int(w["machine"]), []).append((int(w["start"]), int(w["end"])))
        ops = [(int(o["machine"]), int(o["duration"])) for o in doc["operations"]]
        fixed = {int(f["step"]): (int(f["start"]), int(f["end"])) for f in doc.get("fixed", [])}
        chain = _Chain(int(doc["job"]), ops, busy, int(doc.get("release", 0)), fixed)
        return chain.corrupt(rng, self.model.rate(attempt), self.model)

    def _whole(self, doc: dict[str, Any], rng: random.Random, attempt: int) -> list[dict[str, int]]:
        """A whole schedule: jobs placed one after another; a planner turn after a critique re-places only
        the jobs the critic named, around the rest of its previous schedule. After a disruption every job
        starts at the reveal time around the downtime and the started operations, which it copies."""
        jobs = [[(int(o["machine"]), int(o["duration"])) for o in ops] for ops in doc["jobs"]]
        previous = doc.get("previous") or []
        flagged = {int(p["job"]) for p in doc.get("critique", []) if "job" in p}
        keep = [dict(o) for o in previous if int(o.get("job", -1)) not in flagged] if previous else []
        release = int(doc.get("release", 0))
        fixed: dict[int, dict[int, tuple[int, int]]] = {}
        for f in doc.get("fixed", []):
            fixed.setdefault(int(f["job"]), {})[int(f["step"])] = (int(f["start"]), int(f["end"]))
        busy: dict[int, list[tuple[int, int]]] = {}
        for w in doc.get("downtime", []):
            busy.setdefault(int(w["machine"]), []).append((int(w["start"]), int(w["end"])))
        for j, steps in fixed.items():  # started work holds its machine whatever the order jobs are placed in
            for s, (a, b) in steps.items():
                busy.setdefault(jobs[j][s][0], []).append((a, b))
        for o in keep:
            busy.setdefault(int(o["machine"]), []).append((int(o["start"]), int(o["end"])))
        out = list(keep)
        for j, ops in enumerate(jobs):
            if previous and j not in flagged:
                continue
            chain = _Chain(j, ops, busy, release, fixed.get(j))
            for s, e in enumerate(chain.entries):
                if s not in fixed.get(j, {}):
                    busy.setdefault(e["machine"], []).append((e["start"], e["end"]))
            out += chain.corrupt(rng, self.model.rate(attempt), self.model)
        return out

    def _review(self, doc: dict[str, Any], rng: random.Random) -> dict[str, Any]:
        """The simulated critic: the true problems of the schedule, each noticed with the detection rate (after
        a disruption, checked against the reveal time, the downtime and the started operations it was shown)."""
        from alas_argo.jssp.disruption import Disruption, MachineBreakdown
        from alas_argo.jssp.instance import Instance
        from alas_argo.jssp.schedule import Operation, Schedule
        from alas_argo.jssp.validate import validate

        jobs = [[(int(o["machine"]), int(o["duration"])) for o in ops] for ops in doc["jobs"]]
        instance = Instance(name=str(doc.get("instance", "x")), jobs=jobs)
        ops = [Operation(**{k: int(o[k]) for k in ("job", "step", "machine", "start", "end")})
               for o in doc.get("schedule", []) if 0 <= int(o.get("job", -1)) < len(jobs)]
        disruption = baseline = None
        if "release" in doc:
            disruption = Disruption(time=int(doc["release"]), events=[
                MachineBreakdown(machine=int(w["machine"]), start=int(w["start"]),
                                 duration=int(w["end"]) - int(w["start"])) for w in doc.get("downtime", [])])
            # Only the started operations: the validator takes every other one as not started.
            baseline = Schedule.from_operations(instance.name, [
                Operation(**{k: int(f[k]) for k in ("job", "step", "machine", "start", "end")})
                for f in doc.get("fixed", [])])
        report = validate(instance, Schedule.from_operations(instance.name, ops), disruption=disruption,
                          baseline=baseline)
        problems = [{"job": v.scope["job"], "problem": v.message} for v in report.violations
                    if "job" in v.scope and rng.random() < self.model.critic_detection_rate]
        return {"approved": not problems, "problems": problems}
