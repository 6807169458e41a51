"""The human fallback (SagaLLM: a person re-evaluates when automatic replanning cannot produce a valid plan).

When a run stops because a revalidation loop's guard tripped (nothing more the agents, the patch or the
repair may try within their bounds), the run is left in a state a person can act on, read from its log:

- the **reason**: the node that gave up, and the violations of the last plan it checked;
- the **best plan so far**: the committed version in force when there is one (valid when it was committed
  after validation), else the checked plan with the fewest violations (the feedback drafts included);
- how to **resume**: edit that plan, then run the same command with ``--run-id RUN --manual-plan FILE``: the
  node that gave up checks the edited plan first, and the run continues from there (commit, disruptions).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from alas_argo.log import Event, EventType, ExecutionLog

__all__ = ["handoff"]

_CHECKS = (EventType.VALIDATION_FAILED, EventType.VALIDATION_PASSED)


def _violations(event: Event) -> list[dict[str, Any]]:
    report = event.payload.get("report") or {}
    return list(report.get("violations") or [])


def handoff(log: ExecutionLog, failed_node: str | None) -> dict[str, Any] | None:
    """What a person needs after a run gave up at a revalidation node, or None when it did not.

    Args:
        log: The run's log.
        failed_node: The node its latest invocation failed at.
    """
    if failed_node is None or not failed_node.startswith(("check_", "recheck_")):
        return None
    events = log.events()
    checked = [e for e in events if e.type in _CHECKS and isinstance(e.payload.get("plan"), dict)]
    mine = [e for e in checked if e.node_id == failed_node]
    last = _violations(mine[-1]) if mine else []
    codes = Counter(str(v.get("code")) for v in last)
    reason = (f"{failed_node} gave up: the plan still had {len(last)} violation(s) "
              f"({', '.join(f'{c} {n}' for c, n in sorted(codes.items()))}) when its loop guard tripped")
    current = log.current_plan()
    if current is not None:
        version, plan = current
        best: dict[str, Any] = {"source": f"committed version v{version}", "violations": None, "plan": plan}
    elif checked:
        fewest = min(checked, key=lambda e: (len(_violations(e)), -e.seq))
        best = {"source": f"the plan {fewest.node_id} checked (iteration {fewest.payload.get('iteration', 0)})",
                "violations": len(_violations(fewest)), "plan": fewest.payload["plan"]}
    else:
        best = {"source": "none", "violations": None, "plan": None}
    return {"node": failed_node, "reason": reason, "best": best}
