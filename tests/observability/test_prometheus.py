"""A real Prometheus server scrapes the project's exporter on loopback and answers a query for its metric.

Skips only when Debian's `prometheus` binary is absent (CI installs it in `.ci/run`).
"""

from __future__ import annotations

import gc
import http.server
import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from alas_argo import metrics

RULES = Path(__file__).resolve().parents[2] / "observability" / "rules" / "alas.rules.yaml"
BINARY = shutil.which("prometheus")

# A real server: 5 s measured, but its own waits (30 s for readiness, 30 s for a scrape) must fail first, with
# their message, before the suite's per-test limit would.
pytestmark = pytest.mark.timeout(90)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def ready(url: str) -> bool:
    """Whether ``url`` answers 200, the connection closed either way: a response left to the garbage collector
    is an unclosed socket, and its ResourceWarning fails whichever later test is running when it is collected."""
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except urllib.error.HTTPError as e:  # 503 while Prometheus starts
        e.close()
        return False


def wait_for(predicate: Any, seconds: float, what: str) -> Any:
    deadline = time.monotonic() + seconds
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            got = predicate()
            if got:
                return got
        except OSError as e:  # not listening yet
            last_error = e
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what} (last error: {last_error})")


@pytest.fixture
def exporter() -> Iterator[int]:
    server = metrics.serve("127.0.0.1", 0)
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def prometheus(tmp_path: Path, exporter: int) -> Iterator[str]:
    if BINARY is None:
        pytest.skip("prometheus binary not installed (apt-get install prometheus)")
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [{"job_name": "alas", "static_configs": [{"targets": [f"127.0.0.1:{exporter}"]}]}],
    }
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    log = (tmp_path / "prometheus.log").open("w")
    proc = subprocess.Popen(
        [BINARY, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: ready(f"{base}/-/ready"), 30, "Prometheus to become ready")
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def query(base: str, promql: str) -> list[dict[str, Any]]:
    doc = get_json(f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}")
    assert doc["status"] == "success"
    return list(doc["data"]["result"])


def test_prometheus_scrapes_the_exporter_and_returns_the_metric(prometheus: str) -> None:
    for _ in range(3):
        metrics.count_plan_committed("prometheus_test")
    metrics.observe_repair("prometheus_test", 0.5, moved=4, edit_radius=9, makespan_gap=0.1)

    result = wait_for(lambda: query(prometheus, 'alas_plans_committed_total{source="prometheus_test"}'), 30,
                      "the committed-plans counter to be scraped")
    assert result[0]["metric"]["job"] == "alas"
    assert float(result[0]["value"][1]) == 3.0

    up = query(prometheus, 'up{job="alas"}')
    assert float(up[0]["value"][1]) == 1.0
    moved = query(prometheus, 'alas_repair_moved_operations_sum{method="prometheus_test"}')
    assert float(moved[0]["value"][1]) == 4.0


def test_the_server_loads_the_project_rules(prometheus: str) -> None:
    groups = get_json(f"{prometheus}/api/v1/rules")["data"]["groups"]
    names = {rule["name"] for group in groups for rule in group["rules"]}
    assert {"alas:repairs:rate5m", "AlasRepairLatencySLOBreach", "AlasOperatorStalled"} <= names
    assert all(rule["health"] != "err" for group in groups for rule in group["rules"])


def test_the_readiness_probe_closes_every_connection() -> None:
    """The probe against a server answering 503, then 200: nothing left for the collector (under the suite's
    `filterwarnings = error` an unclosed socket would fail this test at the collect, not a later one)."""
    answers = [503, 200]

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(answers.pop(0))
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    # A short poll, so shutdown() below returns in 0.05 s instead of up to serve_forever's default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/-/ready"
        assert wait_for(lambda: ready(url), 10, "the fake server") is True and answers == []
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            gc.collect()
    finally:
        server.shutdown()
        server.server_close()
