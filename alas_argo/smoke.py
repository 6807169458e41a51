"""The smoke check of an installation (`alas smoke`, and the chart's `helm test`): the store takes a run, the
controller is ready, repairs a disruption of that run and commits it, and the log that results verifies.

Each check is the real path a user's request takes (the pipeline writing to the store the settings name, the
controller's HTTP API with its token), on a small bundled instance so the whole check takes seconds. Checks
after a failed one that depend on it are reported as skipped, never as passed.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from alas_argo.errors import AlasError
from alas_argo.jssp.catalog import get_instance
from alas_argo.log import EventType, ExecutionLog, Store
from alas_argo.operator.running import post_disruption
from alas_argo.pipeline import RunConfig, run_pipeline

__all__ = ["Check", "smoke"]

#: A duration change of the instance's first operation, revealed at time 0: always a real disruption (the
#: operation has not finished), which every repair method must answer with a new version.
EXTRA_DURATION = 5


class _Failed(Exception):
    """A check's negative verdict (its message says why). Not ``assert``: ``python -O`` would drop those and
    report every check as passed."""


def _require(condition: bool, why: str) -> None:
    if not condition:
        raise _Failed(why)


@dataclass(frozen=True)
class Check:
    """One check: its name, whether it passed (None: skipped, an earlier check it needs failed), and why."""

    name: str
    ok: bool | None
    detail: str
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def smoke(store: Store, run_id: str, *, instance: str = "ft06", controller: str | None = None,
          token: str | None = None, timeout: float = 30.0) -> list[Check]:
    """Run the checks against ``store`` and, when given, the controller at base URL ``controller``.

    The run ``run_id`` is planned by the heuristic planner (no solver time) and committed as version 1; the
    controller is asked to repair a duration change of its first operation; the log must then hold the
    controller's version as current, committed under this check's idempotency key, and verify.
    """
    checks: list[Check] = []
    log = ExecutionLog(store, run_id)

    def check(name: str, needs: bool, body: Callable[[], str]) -> bool:
        if not needs:
            checks.append(Check(name, None, "skipped: an earlier check failed", 0.0))
            return False
        began = time.perf_counter()
        try:
            detail, ok = body(), True
        except (AlasError, _Failed) as e:
            detail, ok = str(e) or type(e).__name__, False
        checks.append(Check(name, ok, detail, round(time.perf_counter() - began, 3)))
        return ok

    def plan() -> str:
        result = run_pipeline(RunConfig(instance=instance, planner="heuristic", optimizer="heuristic"), log)
        current = log.current_plan()
        if not result.succeeded or current is None or result.final is None:
            raise _Failed(f"the run ended {result.status.value} without a valid committed plan: "
                          f"{'; '.join(f'{k}: {v}' for k, v in result.errors.items()) or 'no error recorded'}")
        return f"run {run_id}: {instance} planned, v{current[0]} committed (makespan {result.final.makespan})"

    planned = check("store: a run is planned and committed", True, plan)
    if controller is None:
        checks.append(Check("controller", None, "not checked: no controller URL given", 0.0))
    else:
        base = controller.rstrip("/")
        ready = check("controller: ready", True, lambda: _ready(base, timeout))
        key = f"{run_id}-smoke"

        def repaired() -> str:
            job_steps = get_instance(instance).jobs[0]
            body = {"time": 0, "method": "lcrp", "budget": 5,
                    "events": [{"kind": "duration_change", "job": 0, "step": 0,
                                "duration": job_steps[0][1] + EXTRA_DURATION}]}
            answer = post_disruption(f"{base}/runs/{run_id}/disruptions", body, key, token, timeout=timeout)
            _require(answer.status_code == 201, f"POST /runs/{run_id}/disruptions answered "
                     f"{answer.status_code or 'nothing'}: {answer.message or answer.body}")
            return (f"v{answer.body.get('version')} committed by the controller (makespan "
                    f"{answer.body.get('makespan')})")

        committed = check("controller: a disruption is repaired and committed", planned and ready, repaired)

        def recorded() -> str:
            current = log.current_plan()
            if current is None or current[0] < 2:
                raise _Failed(f"current version {current and current[0]}, not the repair")
            keys = [(e.payload.get("meta") or {}).get("idempotency_key") for e in log.events()
                    if e.type is EventType.PLAN_COMMITTED and e.payload.get("version") == current[0]]
            _require(keys == [key], f"v{current[0]} was committed under {keys}, not {key!r}")
            return f"v{current[0]} is current in the store, under this check's idempotency key"

        check("store: the controller's version is current", committed, recorded)

    def verified() -> str:
        report = log.verify()
        _require(report.ok, report.summary())
        return report.summary()

    # Also after a failed first check, when the run has a log: a log that does not verify is then the reason the
    # check failed, and verify's report names every damaged record, not only the first one a reader met.
    check("store: the log verifies", planned or _has_log(log), verified)
    return checks


def _has_log(log: ExecutionLog) -> bool:
    """Whether the run has records in the store (a store that cannot answer has none to verify)."""
    try:
        return log.exists()
    except AlasError:
        return False


def _ready(base: str, timeout: float) -> str:
    try:
        with urllib.request.urlopen(f"{base}/readyz", timeout=timeout) as response:
            return f"{base}/readyz answered {response.status}"
    except urllib.error.HTTPError as e:
        with e:  # closed here, not by the collector (an unclosed socket warns wherever it is collected)
            body = e.read(200).decode(errors="replace")  # no further: a body that never ends is not read whole
        raise _Failed(f"{base}/readyz answered {e.code}: {body}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
        raise _Failed(f"{base} not reachable: {getattr(e, 'reason', e)}") from None
