"""`alas metrics serve` and `alas operator` as a user runs them."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

import pytest

from alas_argo.cli import main


def _reap(proc: subprocess.Popen[str]) -> None:
    """Kill the service if a failed assertion left it running, and close its pipe."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    assert proc.stderr is not None
    proc.stderr.close()


def first_match(stream: IO[str], pattern: str) -> re.Match[str]:
    """The first of the process's stderr lines matching ``pattern`` (warnings may come before it)."""
    seen = []
    for _ in range(20):
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        if match := re.search(pattern, line):
            return match
    raise AssertionError(f"no line matching {pattern!r} in {seen!r}")


@pytest.mark.timeout(60)  # 12 s measured in the whole suite on a loaded 2-core machine
def test_metrics_serve_answers_and_stops_on_sigterm() -> None:
    script = "import sys; from alas_argo.cli import main; sys.exit(main())"
    proc = subprocess.Popen([sys.executable, "-c", script, "metrics", "serve", "--port", "0"],
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        match = first_match(proc.stderr, r"http://127\.0\.0\.1:(\d+)/metrics")
        with urllib.request.urlopen(f"http://127.0.0.1:{match.group(1)}/metrics", timeout=30) as resp:
            assert b"alas_exporter_up 1.0" in resp.read()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        _reap(proc)


def test_metrics_serve_on_a_taken_port_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        assert main(["metrics", "serve", "--port", str(s.getsockname()[1])]) == 2
    assert "cannot listen on 127.0.0.1" in capsys.readouterr().err


def test_operator_without_a_cluster_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("kubernetes")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "missing-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert main(["operator", "--once"]) == 2
    missing = tmp_path / "missing-kubeconfig"
    # The client's own words were "No configuration found", naming no file.
    assert (f"no Kubernetes configuration found (not in a pod; KUBECONFIG={missing}): {missing}: no such file"
            in capsys.readouterr().err)
    (tmp_path / "kc").write_text("{}")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kc"))
    assert main(["operator", "--once"]) == 2
    err = capsys.readouterr().err  # a file that is there: the client's reason, not "no such file"
    assert f"KUBECONFIG={tmp_path / 'kc'}): Invalid kube-config file" in err and "no such file" not in err


def test_controller_refuses_to_start_without_a_token(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ALAS_CONTROLLER__TOKEN", raising=False)
    assert main(["controller", "--port", "0"]) == 2
    assert "ALAS_CONTROLLER__TOKEN" in capsys.readouterr().err


@pytest.mark.timeout(60)  # 12 s measured in the whole suite on a loaded 2-core machine
def test_controller_serves_until_sigterm(tmp_path: Path) -> None:
    import os

    script = "import sys; from alas_argo.cli import main; sys.exit(main())"
    env = {**os.environ, "ALAS_CONTROLLER__TOKEN": "t0k3n", "ALAS_STORE__KIND": "fs",
           "ALAS_STORE__ROOT": str(tmp_path / "log")}
    proc = subprocess.Popen([sys.executable, "-c", script, "controller", "--port", "0"], stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stderr is not None
        match = first_match(proc.stderr, r"listening on http://127\.0\.0\.1:(\d+)")
        base = f"http://127.0.0.1:{match.group(1)}"
        with urllib.request.urlopen(f"{base}/healthz", timeout=30) as resp:
            assert resp.status == 200
        with urllib.request.urlopen(f"{base}/readyz", timeout=30) as resp:
            assert resp.status == 200
        request = urllib.request.Request(f"{base}/runs/r/disruptions", data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(request, timeout=5)
        assert denied.value.code == 401
        denied.value.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    finally:
        _reap(proc)
