"""Replay: rebuild the inputs of every recorded validation and repair from the log, re-run them, and
report parity (same verdicts, same plans) with the drift of each step.

Payload contract (the pipeline writes these events; every field name is normative for replay):

- ``validation.passed`` / ``validation.failed``::

      {"instance": {instance JSON of docs/contracts.md} | {"name": "<bundled name>"},
       "plan": {schedule JSON} | "plan_version": N,
       "baseline": {schedule JSON} | null | "baseline_version": N | null,
       "disruption": {disruption JSON} | null,
       "report": {validation report JSON}}

- ``repair.finished``::

      {"instance": ..., "baseline": {schedule JSON} | "baseline_version": N,
       "disruption": {disruption JSON}, "method": str, "budget": float, "seed": int, "workers": int,
       "effort": float (LCRP's time-box multiplier; 1 when absent),
       "tolerance": float (the makespan share LCRP may trade for fewer moves; 0 when absent),
       "first_edit": str (LCRP's first edit asked for; not read: what ran is ``limits.first_edit`` below),
       "deterministic": bool (budgets in CP-SAT deterministic time; when absent, ``metrics.limits.deterministic``,
       else false: logs written before deterministic limits counted wall time), "seed" (0 when absent),
       "workers" (1 when absent), "limits" or "metrics.limits" with "search_streams" (LCRP's search streams; 1
       when absent) and "first_edit" (LCRP's first edit; redispatch when absent),
       "plan": {repaired schedule JSON} | "result_version": N, "metrics": {...}}

Plans are given inline or by a committed version of the same run (read and hash-checked through
:meth:`ExecutionLog.plan`). A validation has parity when the re-run report equals the recorded one; a
repair has parity when it yields the same operations (job, step, machine, start, end). CP-SAT repairs
under a wall-clock budget are not guaranteed bit-reproducible (the search stops where the clock says),
so repair drift is reported per step — makespan recorded vs replayed, operations placed differently,
total start shift — rather than hidden. Repairs recorded with ``"deterministic": true`` (the default since
deterministic limits, :mod:`alas_argo.jssp.searching`) are re-run under the same deterministic limits and
reproduce their plan exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from alas_argo.errors import AlasError
from alas_argo.log.event import Event, canonical_json
from alas_argo.log.events import EventType
from alas_argo.log.execution_log import ExecutionLog

__all__ = ["ReplayReport", "StepParity", "replay_log"]

_VALIDATIONS = {EventType.VALIDATION_PASSED, EventType.VALIDATION_FAILED}


class StepParity(BaseModel):
    """The outcome of re-running one recorded step."""

    model_config = ConfigDict(frozen=True)

    seq: int = Field(description="Sequence number of the recorded event.")
    kind: str = Field(description="validation or repair.")
    node_id: str | None = Field(description="Node that recorded it.")
    parity: bool = Field(description="Whether the re-run reproduced the recorded outcome exactly.")
    detail: str = Field(description="One line: what matched and what drifted.")
    drift: dict[str, Any] = Field(default_factory=dict, description="Recorded vs replayed figures.")
    seconds: float = Field(description="Wall-clock time of the re-run.")


class ReplayReport(BaseModel):
    """Parity over a whole run."""

    model_config = ConfigDict(frozen=True)

    run_id: str = Field(description="The run replayed.")
    steps: list[StepParity] = Field(description="One entry per re-run step, in log order.")
    skipped: int = Field(0, description="Recorded repairs not re-run (repairs=False).")
    seconds: float = Field(description="Wall-clock time of the whole replay, reading included.")
    current_version: int | None = Field(None, description="The plan version in force at the end of the log.")
    retracted: list[int] = Field(default_factory=list, description="Versions a compensation retracted: their "
                                                                   "steps are replayed, their plans are not in force.")

    @property
    def parity(self) -> bool:
        """True when every re-run step reproduced its record."""
        return all(s.parity for s in self.steps)

    def summary(self) -> str:
        """One line for people."""
        kinds = {k: [s for s in self.steps if s.kind == k] for k in ("validation", "repair")}
        parts = [f"{sum(s.parity for s in v)}/{len(v)} {k}s identical" for k, v in kinds.items()]
        skipped = f", {self.skipped} repairs skipped" if self.skipped else ""
        verdict = "parity" if self.parity else "DRIFT"
        state = f"current v{self.current_version}" if self.current_version else "no plan in force"
        if self.retracted:
            state += ", retracted " + ", ".join(f"v{v}" for v in self.retracted)
        return f"run {self.run_id}: {verdict}: {', '.join(parts)}{skipped}; {state} ({self.seconds:.2f} s)"

    def to_json(self) -> dict[str, Any]:
        """The report as JSON."""
        return {**self.model_dump(mode="json"), "parity": self.parity}


class _Inputs:
    """Resolves instance and plan references of one run, caching what it has read."""

    def __init__(self, log: ExecutionLog) -> None:
        self.log = log
        self._instances: dict[str, Any] = {}

    def instance(self, ref: Any) -> Any:
        from alas_argo.jssp.catalog import get_instance
        from alas_argo.jssp.instance import Instance

        if not isinstance(ref, dict):
            raise KeyError("instance")
        key = canonical_json(ref).decode()
        if key not in self._instances:
            self._instances[key] = get_instance(ref["name"]) if set(ref) == {"name"} else Instance.model_validate(ref)
        return self._instances[key]

    def plan(self, payload: dict[str, Any], inline: str, version: str, *, required: bool = True) -> Any:
        from alas_argo.jssp.schedule import Schedule

        if payload.get(inline) is not None:
            return Schedule.model_validate(payload[inline])
        if payload.get(version) is not None:
            return Schedule.model_validate(self.log.plan(int(payload[version])))
        if required:
            raise KeyError(f"{inline} or {version}")
        return None

    @staticmethod
    def disruption(payload: dict[str, Any], *, required: bool) -> Any:
        from alas_argo.jssp.disruption import Disruption

        if payload.get("disruption") is None:
            if required:
                raise KeyError("disruption")
            return None
        return Disruption.model_validate(payload["disruption"])


def _ops(schedule: Any) -> dict[tuple[int, int], tuple[int, int, int]]:
    return {(o.job, o.step): (o.machine, o.start, o.end) for o in schedule.operations}


def _validation(inputs: _Inputs, event: Event) -> tuple[bool, str, dict[str, Any]]:
    from alas_argo.jssp.validate import validate

    p = event.payload
    recorded = p["report"]
    report = validate(inputs.instance(p["instance"]), inputs.plan(p, "plan", "plan_version"),
                      disruption=inputs.disruption(p, required=False),
                      baseline=inputs.plan(p, "baseline", "baseline_version", required=False)).to_json()
    codes_rec = sorted(str(v["code"]) for v in recorded.get("violations", []))
    codes_new = sorted(str(v["code"]) for v in report.get("violations", []))
    drift = {"valid_recorded": recorded.get("valid"), "valid_replayed": report["valid"],
             "violations_recorded": len(codes_rec), "violations_replayed": len(codes_new)}
    same = report == recorded
    if same:
        detail = f"verdict {'valid' if report['valid'] else 'invalid'}, {len(codes_new)} violations, identical"
    elif recorded.get("valid") == report["valid"] and codes_rec == codes_new:
        detail = "same verdict and violation codes; messages or scopes differ"
    else:
        detail = (f"verdict {recorded.get('valid')} -> {report['valid']}, codes {codes_rec} -> {codes_new}")
    return same, detail, drift


def _deterministic(payload: dict[str, Any]) -> bool:
    """Whether the recorded repair counted deterministic time: said at the top, or in its metrics' limits."""
    if "deterministic" in payload:
        return bool(payload["deterministic"])
    limits = (payload.get("metrics") or {}).get("limits") or {}
    return bool(limits.get("deterministic", False))


def _streams(payload: dict[str, Any]) -> int:
    """LCRP's search streams the recorded repair ran (its limits' ``search_streams``, at the top or in its
    metrics); 1 when absent: repairs recorded before the streams ran one."""
    limits = payload.get("limits") or (payload.get("metrics") or {}).get("limits") or {}
    return int(limits.get("search_streams", 1))


def _first_edit(payload: dict[str, Any]) -> str:
    """LCRP's first edit the recorded repair ran (its limits' ``first_edit``, where ``search_streams`` is read);
    redispatch when absent: the default, and what every repair recorded before the tabu first edit ran."""
    limits = payload.get("limits") or (payload.get("metrics") or {}).get("limits") or {}
    return str(limits.get("first_edit", "redispatch"))


def _repair(inputs: _Inputs, event: Event) -> tuple[bool, str, dict[str, Any]]:
    from alas_argo.jssp.repair import RepairMethod, repair
    from alas_argo.jssp.repair.tabu import kernel as tabu_kernel

    p = event.payload
    instance = inputs.instance(p["instance"])
    recorded = inputs.plan(p, "plan", "result_version")
    deterministic = _deterministic(p)
    result = repair(instance, inputs.plan(p, "baseline", "baseline_version"),
                    inputs.disruption(p, required=True), p["method"], float(p["budget"]),
                    seed=int(p.get("seed", 0)), workers=int(p.get("workers", 1)), effort=float(p.get("effort", 1.0)),
                    tolerance=float(p.get("tolerance", 0.0)), deterministic=deterministic, streams=_streams(p),
                    first_edit=_first_edit(p))
    old, new = _ops(recorded), _ops(result.schedule)
    differ = [k for k in old.keys() | new.keys() if old.get(k) != new.get(k)]
    shift = sum(abs(new[k][1] - old[k][1]) for k in differ if k in old and k in new)
    drift = {"makespan_recorded": recorded.makespan, "makespan_replayed": result.makespan,
             "operations_differing": len(differ), "start_shift_vs_recorded": shift, "valid": result.valid}
    same = not differ
    detail = (f"{p['method']}: same plan, makespan {result.makespan}" if same else
              f"{p['method']}: makespan {recorded.makespan} -> {result.makespan}, {len(differ)} operations "
              f"placed differently (shift {shift}), replayed plan {'valid' if result.valid else 'INVALID'}")
    if not same and not deterministic and RepairMethod.parse(p["method"]).searches:
        # Said with the drift: the user asked for wall-clock limits (--wall-clock), under which two runs may
        # differ; the drift is then the machine's speed, not the log's.
        detail += "; recorded under wall-clock limits, which a re-run need not reproduce"
    if not same and _first_edit(p) == "tabu" and tabu_kernel() is None:
        # The drift is then this installation's, not the log's: the repair ran without the search it recorded.
        detail += ("; recorded with the compiled tabu first edit, which this installation does not have (built at "
                   "install when a C compiler is there): replayed without it")
    return same, detail, drift


def replay_log(log: ExecutionLog, *, repairs: bool = True,
               on_step: Callable[[StepParity], None] | None = None) -> ReplayReport:
    """Re-run every validation (and, unless ``repairs`` is False, every repair) recorded in ``log``.

    A step whose inputs cannot be rebuilt (a payload missing a contract field or holding one not of its
    form, a plan version that is not there) or whose re-run raises is reported as drift with the reason,
    never skipped silently.

    Args:
        log: The run to replay.
        repairs: Also re-run repairs (each may spend its recorded CP-SAT budget again).
        on_step: Called after each step (progress display).
    """
    started = time.perf_counter()
    inputs, steps, skipped = _Inputs(log), [], 0
    events = log.events()
    head = log.head()
    for event in events:
        if event.type in _VALIDATIONS:
            kind, run = "validation", _validation
        elif event.type is EventType.REPAIR_FINISHED:
            if not repairs:
                skipped += 1
                continue
            kind, run = "repair", _repair
        else:
            continue
        t0 = time.perf_counter()
        try:
            same, detail, drift = run(inputs, event)
        except KeyError as e:
            same, detail, drift = False, f"cannot rebuild inputs: payload lacks {e.args[0]}", {}
        except AlasError as e:
            same, detail, drift = False, f"re-run failed: {e}", {"error": type(e).__name__}
        except (TypeError, ValueError) as e:  # a field not of its contract's form (pydantic's errors are ValueErrors)
            reason = str(e).partition("\n")[0]
            same, detail, drift = False, f"re-run failed: {type(e).__name__}: {reason}", {"error": type(e).__name__}
        result_version = event.payload.get("result_version", event.payload.get("plan_version"))
        if isinstance(result_version, int) and result_version in head.retracted:
            detail += f" (v{result_version} since retracted by event {head.retracted[result_version]})"
        step = StepParity(seq=event.seq, kind=kind, node_id=event.node_id, parity=same, detail=detail,
                          drift=drift, seconds=round(time.perf_counter() - t0, 4))
        steps.append(step)
        if on_step is not None:
            on_step(step)
    return ReplayReport(run_id=log.run_id, steps=steps, skipped=skipped,
                        seconds=round(time.perf_counter() - started, 4), current_version=head.current,
                        retracted=sorted(head.retracted))
