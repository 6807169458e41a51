"""Configured secrets never reach the log or the terminal, whatever field they arrive in."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli import main
from alas_argo.log import ExecutionLog
from alas_argo.log.fs_store import FsStore
from alas_argo.scrubbing import MARK, register_secret, scrub, scrub_text
from alas_argo.settings import load_settings
from tests.agents.llm_server import Reply, ScriptedLlmServer, running_server

KEY = "sk-echo-4f9a1c2e7b3d5a6c"


@pytest.fixture
def echoing_endpoint() -> Iterator[ScriptedLlmServer]:
    """An LLM endpoint that refuses every call and echoes the Authorization header in its 401 body."""
    for server in running_server():
        server.route = lambda request: Reply(status=401, raw_body=json.dumps({"error": {
            "message": f"invalid key: {request['headers'].get('Authorization', '')}"}}).encode())
        yield server


def _stored_bytes(root: Path) -> list[bytes]:
    out = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            out.append(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    return out


def test_an_echoed_api_key_reaches_neither_the_log_nor_the_terminal(
        tmp_path: Path, echoing_endpoint: ScriptedLlmServer, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    root = tmp_path / "store"
    main(["run", "ft06", "--planner", "llm", "--llm-base-url", echoing_endpoint.url, "--root", str(root),
          "--run-id", "leak", "--time-limit", "1"])
    printed = capsys.readouterr()
    assert echoing_endpoint.requests, "the endpoint was never called"
    assert KEY not in printed.out and KEY not in printed.err
    stored = _stored_bytes(root)
    assert stored and not any(KEY.encode() in data for data in stored)
    # the echo itself arrived, scrubbed, in the log (so the test saw the leak path, not an empty run)
    assert any(f"invalid key: Bearer {MARK}".encode() in data for data in stored)
    assert ExecutionLog(FsStore(root), "leak").verify().ok  # scrubbed before sealing: the chain holds
    assert main(["log", "show", "leak", "--root", str(root)]) == 0
    assert KEY not in capsys.readouterr().out


def test_every_secret_setting_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    values = {"ARGO_TOKEN": "argo-token-7c1d9e", "ALAS_CONTROLLER__TOKEN": "controller-token-55aa",
              "AWS_SECRET_ACCESS_KEY": "s3-secret-0b9f2d", "AWS_ACCESS_KEY_ID": "s3-access-77e1c3"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    load_settings()
    for value in values.values():
        assert scrub_text(f"x {value} y") == f"x {MARK} y"


def test_scrub_walks_documents_and_leaves_short_values_alone() -> None:
    register_secret("nested-secret-31337")
    register_secret("short")  # too short to be a secret: ordinary words must survive
    doc: dict[str, Any] = {"a": ["ok", {"nested-secret-31337": "Bearer nested-secret-31337!"}], "n": 3,
                           "s": "short story"}
    assert scrub(doc) == {"a": ["ok", {MARK: f"Bearer {MARK}!"}], "n": 3, "s": "short story"}
    assert doc["a"][1] == {"nested-secret-31337": "Bearer nested-secret-31337!"}  # the input is untouched


def test_the_cli_writes_what_its_scrubbing_stream_held_back(capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A command's last write can end in what begins a secret (held back until the next write): `main` flushes
    its scrubbing streams when the command ends, so that end is not lost with them."""
    register_secret("held-secret-51c0")

    def command(handler: Any, args: Any) -> int:
        print("a line, then the end: held-", end="")
        return 0
    monkeypatch.setattr("alas_argo.cli._run", command)
    assert main(["instance", "list"]) == 0
    assert capsys.readouterr().out == "a line, then the end: held-"


def test_a_warning_logged_by_a_command_reads_as_the_clis_own_line() -> None:
    """A head the store did not take is a warning from the log's own module; with no logging configured it was
    printed bare, reading as part of the error after it. It is `alas: warning: ...` now. (A fresh interpreter:
    pytest's own logging handlers would take the warning here.)"""
    code = ("import logging, sys\n"
            "from alas_argo import cli\n"
            "def command(handler, args):\n"
            "    logging.getLogger('alas_argo.log.chain').warning('head of run r not updated: %s', 'gone')\n"
            "    return 0\n"
            "cli._run = command\n"
            "sys.exit(cli.main(['instance', 'list']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[1])
    assert (done.returncode, done.stderr) == (0, "alas: warning: head of run r not updated: gone\n")
