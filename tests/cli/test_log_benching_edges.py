"""`alas bench log` and `alas bench open` as commands: the store they measure, the flags they hand on, what they
print.

The measuring is tested in tests/benchmarks/test_log_edges.py and test_open_cost_edges.py; here it is replaced by
figures made up for the case, so that what the command itself does is checked exactly and fast: an fs store
without --root is a fresh directory of its own, removed afterwards (benchmark runs never mix with the real
`.alas`), a given --root is used as it is, and the text output says every figure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alas_argo.cli import log_benching, main
from alas_argo.settings import Settings, StoreKind

LOG_RESULT: dict[str, Any] = {
    "store": "fs:/somewhere",
    "append": {"appends": 7, "p50_ms": 1.25, "p99_ms": 3.5, "mean_ms": 1.5, "max_ms": 4.0},
    "plan_bytes": {"versions": 10, "operations": 1000, "bytes_per_version": 2100, "json_bytes_per_version": 42000,
                   "ratio": 20.0},
}
REPLAY = {"versions": 5, "events": 12, "steps": 9, "parity": True, "replay_seconds": 0.25, "build_seconds": 0.1}


class Recorder:
    """Stands in for a benchmark: remembers the settings and arguments, and whether the store's root existed
    while it ran."""

    def __init__(self, result: dict[str, Any]) -> None:
        self.result = result
        self.calls: list[tuple[Settings, tuple[Any, ...], dict[str, Any], bool]] = []
        self.working_directory: list[list[str]] = []  #: what the working directory held while it ran

    def __call__(self, settings: Settings, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.calls.append((settings, args, kwargs, Path(settings.store.root).is_dir()))
        self.working_directory.append(sorted(p.name for p in Path().iterdir()))
        return self.result


@pytest.fixture
def log_bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Recorder:
    monkeypatch.chdir(tmp_path)
    fake = Recorder({**LOG_RESULT, "replay": REPLAY})
    monkeypatch.setattr(log_benching, "run_log_bench", fake)
    return fake


@pytest.fixture
def open_bench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Recorder:
    monkeypatch.chdir(tmp_path)
    fake = Recorder({"store": "fs:/x", "unit": "store operations",
                     "rows": [{"events": 10, "open": 4, "job_agent": 11, "controller": 6},
                              {"events": 1000, "open": 4, "job_agent": 11, "controller": 123456}]})
    monkeypatch.setattr(log_benching, "run_open_bench", fake)
    return fake


def test_log_hands_on_its_defaults_and_prints_every_figure(log_bench: Recorder,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "log", "--root", "given"]) == 0
    settings, args, kwargs, _ = log_bench.calls[0]
    assert args == () and kwargs == {"appends": 200, "versions": 100, "replay": True}
    assert settings.store.kind is StoreKind.FS and settings.store.root == Path("given")
    assert capsys.readouterr().out.splitlines() == [
        "store fs:/somewhere",
        "append latency: p50 1.25 ms, p99 3.5 ms over 7 appends",
        "50x20 plan: 2100 bytes per stored version (42000 bytes as JSON, 20.0x smaller)",
        "replay of 5 versions (9 steps): 0.25 s, parity"]


def test_log_flags_reach_the_benchmark_and_a_drift_is_said(log_bench: Recorder, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    log_bench.result = {**LOG_RESULT, "replay": {**REPLAY, "parity": False}}
    assert main(["bench", "log", "--root", "r", "--appends", "3", "--versions", "4"]) == 0
    assert log_bench.calls[0][2] == {"appends": 3, "versions": 4, "replay": True}
    assert capsys.readouterr().out.splitlines()[-1] == "replay of 5 versions (9 steps): 0.25 s, DRIFT"


def test_log_without_replay_has_no_replay_line_and_json_is_the_result(log_bench: Recorder,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    log_bench.result = dict(LOG_RESULT)
    assert main(["bench", "log", "--root", "r", "--no-replay"]) == 0
    assert log_bench.calls[0][2]["replay"] is False
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and lines[0] == "store fs:/somewhere"
    assert main(["bench", "log", "--root", "r", "--no-replay", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == LOG_RESULT


@pytest.mark.parametrize("flag", ["--appends", "--versions"])
@pytest.mark.parametrize("value", ["0", "100001"])
def test_log_counts_out_of_range_are_refused(flag: str, value: str, log_bench: Recorder,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "log", "--root", "r", flag, value])
    assert stopped.value.code == 2
    assert f"argument {flag}: must be from 1 to 100000, got {value}" in capsys.readouterr().err
    assert log_bench.calls == []


def test_log_counts_at_their_ends_are_taken(log_bench: Recorder) -> None:
    assert main(["bench", "log", "--root", "r", "--appends", "1", "--versions", "100000", "--json"]) == 0
    assert log_bench.calls[0][2] == {"appends": 1, "versions": 100000, "replay": True}


@pytest.mark.parametrize("command", [["bench", "log"], ["bench", "log", "--store", "fs"], ["bench", "open"]])
def test_an_fs_store_without_root_is_a_scratch_directory_removed_afterwards(
        command: list[str], log_bench: Recorder, open_bench: Recorder, tmp_path: Path) -> None:
    assert main([*command, "--json"]) == 0
    settings, _, _, existed = (log_bench.calls or open_bench.calls)[0]
    root = Path(settings.store.root)
    # Under the working directory, named as a bench's, there while the bench ran, gone afterwards; never .alas.
    assert settings.store.kind is StoreKind.FS and existed
    assert root.parent.resolve() == tmp_path.resolve() and root.name.startswith(".alas-bench-")
    assert not root.exists() and list(tmp_path.iterdir()) == []


def test_a_given_root_is_used_and_kept(log_bench: Recorder, tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    assert main(["bench", "log", "--store", "fs", "--root", "mine", "--json"]) == 0
    assert log_bench.calls[0][0].store.root == Path("mine") and (tmp_path / "mine").is_dir()
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]


def test_s3_gets_no_scratch_directory(log_bench: Recorder, tmp_path: Path) -> None:
    assert main(["bench", "log", "--store", "s3", "--json"]) == 0
    settings = log_bench.calls[0][0]
    # No directory was made for it, not even for the run's length: the store's root is the unused default.
    assert settings.store.kind is StoreKind.S3 and settings.store.root == Path(".alas")
    assert log_bench.working_directory == [[]] and list(tmp_path.iterdir()) == []


def test_open_hands_on_the_run_lengths_and_prints_a_table(open_bench: Recorder,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "open", "--root", "r"]) == 0
    settings, args, kwargs, _ = open_bench.calls[0]
    assert args == ([10, 100, 1000],) and kwargs == {} and settings.store.root == Path("r")
    assert capsys.readouterr().out.splitlines() == [
        "store fs:/x (store operations per access)",
        "  events        open   job_agent  controller",
        "      10           4          11           6",
        "    1000           4          11      123456"]
    assert main(["bench", "open", "--root", "r", "--events", "5,50"]) == 0
    assert open_bench.calls[1][1] == ([5, 50],)


def test_open_json_is_the_result_and_bad_lengths_name_the_flag(open_bench: Recorder,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "open", "--root", "r", "--events", "7", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == open_bench.result
    assert main(["bench", "open", "--root", "r", "--events", "7,x"]) == 2
    assert "--events" in capsys.readouterr().err and len(open_bench.calls) == 1


def test_both_helps_say_the_runs_stay_in_the_store(capsys: pytest.CaptureFixture[str]) -> None:
    for command, runs in (("log", "bench-append-*, bench-bytes-* and bench-replay-*"), ("open", "bench-open-*")):
        with pytest.raises(SystemExit):
            main(["bench", command, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert f"It writes its runs ({runs}) into the store given" in text
        assert "the log is append-only: they stay there" in text
