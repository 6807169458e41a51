"""`alas smoke`'s own code (alas_argo/cli/smoke_command.py), edge by edge: every flag reaches the check (the store
the flags name over the environment, the instance, the controller, the token, the timeout, by default ft06 and
30 s), the generated run id's shape, the JSON document, and the lines `helm test --logs` shows: one per check,
never wrapped or highlighted, and the count of passed or failed checks; a bad controller address's full message.

Mutation testing (bench/README.md, fifteenth session) found these read by no test: the command's other tests run
the real checks and read a word or two of the output. Here the checks are a stand-in that records what it was
given, so each test looks at this module alone.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

import alas_argo.cli.smoke_command as smoke_command
import alas_argo.smoke
from alas_argo.cli import main
from alas_argo.errors import InputError
from alas_argo.log import FsStore, Store
from alas_argo.settings import Settings
from alas_argo.smoke import Check

CHECKS = [Check("store: a run is planned and committed", True, "run s1 v1", 0.123),
          Check("controller: ready", False, "answered 503", 1.5),
          Check("log: verifies", None, "skipped: an earlier check failed", 0.0)]


class _Checks:
    """Stands in for `alas_argo.smoke.smoke`: records its arguments and returns the given checks."""

    def __init__(self, checks: list[Check]) -> None:
        self.checks = checks
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, *args: Any, **kwargs: Any) -> list[Check]:
        self.calls.append((args, kwargs))
        return self.checks


@pytest.fixture
def stores(monkeypatch: pytest.MonkeyPatch) -> list[Settings]:
    """The settings each store was opened with (a filesystem store under their root is opened)."""
    opened: list[Settings] = []

    def open_store(settings: Settings) -> Store:
        opened.append(settings)
        return FsStore(settings.store.root)

    monkeypatch.setattr(smoke_command, "open_store", open_store)
    return opened


def _stand_in(monkeypatch: pytest.MonkeyPatch, checks: list[Check]) -> _Checks:
    fake = _Checks(checks)
    monkeypatch.setattr(alas_argo.smoke, "smoke", fake)
    monkeypatch.delenv("ALAS_CONTROLLER__TOKEN", raising=False)
    return fake


def test_every_flag_reaches_the_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stores: list[Settings],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    fake = _stand_in(monkeypatch, CHECKS[:1])
    monkeypatch.setenv("ALAS_CONTROLLER__TOKEN", "smoke-edge-token-42")
    monkeypatch.setenv("ALAS_STORE__KIND", "s3")  # the flag wins over the environment
    assert main(["smoke", "--store", "fs", "--root", str(tmp_path / "s"), "--instance", "la01",
                 "--controller", "http://c:8080", "--timeout", "2.5", "--run-id", "s1", "--json"]) == 0
    capsys.readouterr()
    (settings,) = stores
    assert settings.store.kind == "fs" and settings.store.root == tmp_path / "s"
    ((args, kwargs),) = fake.calls
    assert args[1] == "s1"
    assert kwargs == {"instance": "la01", "controller": "http://c:8080", "token": "smoke-edge-token-42",
                      "timeout": 2.5}


def test_the_defaults_are_ft06_no_controller_no_token_and_30_seconds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stores: list[Settings],
        capsys: pytest.CaptureFixture[str]) -> None:
    fake = _stand_in(monkeypatch, CHECKS[:1])
    assert main(["smoke", "--root", str(tmp_path / "s"), "--json"]) == 0
    capsys.readouterr()
    ((args, kwargs),) = fake.calls
    assert kwargs == {"instance": "ft06", "controller": None, "token": None, "timeout": 30.0}
    # smoke-<UTC time to the second>-<6 hex digits>
    assert re.fullmatch(r"smoke-\d{8}T\d{6}Z-[0-9a-f]{6}", args[1]), args[1]


def test_the_generated_run_id_is_stamped_in_utc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                stores: list[Settings], capsys: pytest.CaptureFixture[str]) -> None:
    # The stamp ends in Z: it must be UTC whatever the pod's time zone (a fixed UTC clock stands in for now).
    fake = _stand_in(monkeypatch, CHECKS[:1])
    monkeypatch.setattr(time, "gmtime", lambda *_: time.struct_time((2024, 1, 2, 3, 4, 5, 1, 2, 0)))
    assert main(["smoke", "--root", str(tmp_path / "s"), "--json"]) == 0
    capsys.readouterr()
    ((args, _),) = fake.calls
    assert args[1].startswith("smoke-20240102T030405Z-")


def test_the_json_document_has_the_run_the_verdict_and_every_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stores: list[Settings],
        capsys: pytest.CaptureFixture[str]) -> None:
    _stand_in(monkeypatch, CHECKS)
    assert main(["smoke", "--root", str(tmp_path / "s"), "--run-id", "s1", "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {"run_id": "s1", "ok": False,
                                                   "checks": [c.to_json() for c in CHECKS]}


def test_the_lines_name_each_check_its_mark_seconds_and_detail_and_count_the_failures(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stores: list[Settings],
        capsys: pytest.CaptureFixture[str]) -> None:
    _stand_in(monkeypatch, CHECKS)
    assert main(["smoke", "--root", str(tmp_path / "s"), "--run-id", "s1"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        "alas smoke: run s1",
        "ok      store: a run is planned and committed (0.12 s): run s1 v1",
        "FAILED  controller: ready (1.50 s): answered 503",
        "skipped log: verifies (0.00 s): skipped: an earlier check failed",
        "1 of 3 checks failed"]


def test_all_passed_counts_the_passed_checks_not_the_skipped_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stores: list[Settings],
        capsys: pytest.CaptureFixture[str]) -> None:
    _stand_in(monkeypatch, [CHECKS[0], CHECKS[0], CHECKS[2]])
    assert main(["smoke", "--root", str(tmp_path / "s"), "--run-id", "s1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "all 2 checks passed"


def test_a_long_detail_stays_on_one_line_and_is_not_highlighted_in_colour(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stores: list[Settings],
        capsys: pytest.CaptureFixture[str]) -> None:
    # `helm test --logs` and CI logs: a wrapped line splits a URL, highlighting puts escape codes inside it.
    detail = "answered 503 from http://alas-controller:8080/readyz " + "x" * 150
    _stand_in(monkeypatch, [Check("controller: ready", False, detail, 1.5)])
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(["smoke", "--root", str(tmp_path / "s"), "--run-id", "s1"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[1].endswith(f"controller: ready (1.50 s): {detail}")


def test_a_controller_address_that_is_not_http_is_refused_with_an_example() -> None:
    with pytest.raises(InputError) as info:
        smoke_command._check_url("alas-controller:8080")
    assert info.value.message == ("not a controller address: expected http://host:port or https://host:port "
                                  "(e.g. http://alas-controller:8080)")
    assert info.value.where == "alas-controller:8080"
