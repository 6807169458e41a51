"""The recording and alerting rules pass `promtool check rules` and their `promtool test rules` unit tests."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

RULES_DIR = Path(__file__).resolve().parents[2] / "observability" / "rules"
RULES = RULES_DIR / "alas.rules.yaml"
CHART_RULES = RULES_DIR.parents[1] / "charts" / "alas" / "files" / "alas.rules.yaml"

promtool = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(promtool is None, reason="promtool not installed (apt-get install prometheus)")


@needs_promtool
def test_promtool_check_rules() -> None:
    done = subprocess.run([str(promtool), "check", "rules", str(RULES)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


@needs_promtool
def test_promtool_unit_tests() -> None:
    done = subprocess.run([str(promtool), "test", "rules", "alas.rules.test.yaml"], cwd=RULES_DIR,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


@needs_promtool
def test_promtool_rejects_a_broken_rule(tmp_path: Path) -> None:
    """The check above can fail: a syntax error in an expression is caught."""
    broken = yaml.safe_load(RULES.read_text())
    broken["groups"][0]["rules"][0]["expr"] = "sum by (method (rate(alas_repairs_total[5m]))"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    done = subprocess.run([str(promtool), "check", "rules", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0


def test_every_alert_has_severity_summary_and_description() -> None:
    doc = yaml.safe_load(RULES.read_text())
    alerts = [r for g in doc["groups"] for r in g["rules"] if "alert" in r]
    assert {a["alert"] for a in alerts} >= {"AlasRepairLatencySLOBreach", "AlasControllerStoreUnreachable",
                                             "AlasOperatorStalled", "AlasOperatorActionsFailing"}
    for alert in alerts:
        assert alert["labels"]["severity"] in {"info", "warning", "critical"}
        assert alert["annotations"]["summary"] and alert["annotations"]["description"]


def test_chart_ships_the_same_rules() -> None:
    assert CHART_RULES.read_text() == RULES.read_text(), "copy observability/rules/alas.rules.yaml to the chart"


# What the two scraped processes run, in a fresh interpreter (this one's registry holds whatever other tests
# counted): the controller answers a repair and its probes, the operator runs passes, one failing.
_EXERCISE = """
import sys, threading, urllib.request
from alas_argo import metrics
from alas_argo.controller import RepairService, serve
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.dispatching import dispatch
from alas_argo.log import EventType, ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.operator import Operator
from tests.operators.test_running import MemoryApi, cr

store = FsStore(sys.argv[1])
log = ExecutionLog(store, "run-1")
inst = get_instance("ft06")
log.append(EventType.RUN_STARTED, payload={"instance": inst.to_json()})
log.commit_plan(dispatch(inst).to_json(), reason="plan")
server = serve(RepairService(store), "127.0.0.1", 0, token="t" * 20)
base = f"http://127.0.0.1:{server.server_port}"
body = b'{"time": 0, "events": [{"kind": "machine_breakdown", "machine": 0, "start": 0, "duration": 5}]}'
request = urllib.request.Request(f"{base}/runs/run-1/disruptions", data=body, method="POST", headers={
    "Authorization": "Bearer " + "t" * 20, "Idempotency-Key": "k1", "Content-Type": "application/json"})
urllib.request.urlopen(request, timeout=60).close()
for path in ("/healthz", "/readyz", "/metrics"):
    urllib.request.urlopen(base + path, timeout=60).close()

class OnePass(threading.Event):
    def wait(self, timeout=None):
        self.set()
        return True

api = MemoryApi()
api.put("alas.dev", "planruns", cr("PlanRun", "p", {"instance": "ft06"}))
api.fail_patch_for.add("p")
operator = Operator(api, "alas")
operator.run_forever(0, OnePass())
api.list_namespaced_custom_object = None  # the next pass fails
operator.run_forever(0, OnePass())
sys.stdout.write(metrics.exposition().decode())
"""


def _series(expr: str, recorded: dict[str, str]) -> set[str]:
    """The metric names an expression reads, through the recording rules it uses."""
    names = set(re.findall(r"\b(alas_[a-z0-9_]+)", expr))
    for record in re.findall(r"\b(alas:[a-z0-9_:]+)", expr):
        names |= _series(recorded[record], recorded)
    return names


def test_alerts_use_only_metrics_the_controller_and_operator_expose(tmp_path: Path) -> None:
    """Step pods are short-lived: what they count reaches Prometheus only through the controller's inbox, seconds
    later and only when their report could be written. Every series an alert reads must be one the controller or
    the operator counts itself."""
    root = RULES_DIR.parents[1]
    done = subprocess.run([sys.executable, "-c", _EXERCISE, str(tmp_path / "log")], capture_output=True,
                          text=True, timeout=300, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    exposed = {line.split("{")[0].split(" ")[0] for line in done.stdout.splitlines()
               if line and not line.startswith("#")}
    assert "alas_repairs_total" in exposed and "alas_operator_last_pass_timestamp_seconds" in exposed
    assert "alas_validations_total" not in exposed  # what only the pipeline counts is not counted here
    doc = yaml.safe_load(RULES.read_text())
    recorded = {r["record"]: r["expr"] for g in doc["groups"] for r in g["rules"] if "record" in r}
    for alert in (r for g in doc["groups"] for r in g["rules"] if "alert" in r):
        missing = _series(alert["expr"], recorded) - exposed
        assert not missing, f"{alert['alert']} reads {sorted(missing)}, which no scraped process exposes"
