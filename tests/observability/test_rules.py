"""The recording and alerting rules pass `promtool check rules` and their `promtool test rules` unit tests."""

from __future__ import annotations

import shutil
import subprocess
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
    assert {a["alert"] for a in alerts} >= {"AlasRepairLatencySLOBreach", "AlasValidationFailureRateHigh",
                                             "AlasCompensationStorm"}
    for alert in alerts:
        assert alert["labels"]["severity"] in {"info", "warning", "critical"}
        assert alert["annotations"]["summary"] and alert["annotations"]["description"]


def test_chart_ships_the_same_rules() -> None:
    assert CHART_RULES.read_text() == RULES.read_text(), "copy observability/rules/alas.rules.yaml to the chart"
