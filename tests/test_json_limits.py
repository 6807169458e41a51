"""The issue's hostile documents through the real commands: one line, exit 2, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from alas_argo.cli import main
from alas_argo.errors import InputError
from alas_argo.json_limits import MAX_DEPTH, MAX_NODES, check_document, load_json, loads
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.planning import plan

BREAKDOWN = {"kind": "machine_breakdown", "machine": 1, "start": 10, "duration": 5}
DEEP = "[" * 100_000 + "]" * 100_000
HUGE_INT = "1" * 4300


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    schedule = plan(get_instance("ft06"), time_limit=1, method="dispatch").schedule.to_json()
    docs = {
        "deep": DEEP,
        "huge-int": '{"time": ' + HUGE_INT + ', "events": []}',
        "huge-time": json.dumps({"time": 10**17, "events": [BREAKDOWN]}),
        "huger-time": json.dumps({"time": 10**30, "events": [BREAKDOWN]}),
        "bool-time": json.dumps({"time": True, "events": [BREAKDOWN]}),
        "bool-machine": json.dumps({"time": 10, "events": [{**BREAKDOWN, "machine": True}]}),
        "nan": '{"time": NaN, "events": []}',
        "schedule": json.dumps(schedule),
    }
    out = {}
    for name, text in docs.items():
        path = tmp_path / f"{name}.json"
        path.write_text(text)
        out[name] = str(path)
    return out


def _one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("alas: error: ") and "Traceback" not in err, err
    return err


@pytest.mark.parametrize(("name", "fragment"), [
    ("deep", "nested more than"), ("huge-int", "integer of 4300 digits"), ("nan", "NaN is not a JSON number")])
def test_instance_show_and_validate(files: dict[str, str], capsys: pytest.CaptureFixture[str], name: str,
                                    fragment: str) -> None:
    assert fragment in _one_line_exit_2(["instance", "show", files[name]], capsys)
    assert fragment in _one_line_exit_2(["validate", "--instance", "ft06", "--schedule", files[name]], capsys)


@pytest.mark.parametrize(("name", "fragment"), [
    ("deep", "nested more than"), ("huge-int", "integer of 4300 digits"),
    ("huge-time", "at time: Input should be less than or equal to 1099511627776"),
    ("huger-time", "integer of 31 digits"),
    ("bool-time", "at time: Input should be a valid integer"),
    ("bool-machine", "at events[0].machine: Input should be a valid integer")])
def test_validate_and_repair_refuse_hostile_disruptions(files: dict[str, str], tmp_path: Path, name: str,
                                                        fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--instance", "ft06", "--schedule", files["schedule"], "--disruption", files[name]]
    assert fragment in _one_line_exit_2(["validate", *base], capsys)
    assert fragment in _one_line_exit_2(["repair", *base, "--out", str(tmp_path / "r.json")], capsys)


def test_run_refuses_a_hostile_disruption_file(files: dict[str, str], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    err = _one_line_exit_2(["run", "ft06", "--root", str(tmp_path / "st"), "--disrupt", files["bool-time"]], capsys)
    assert files["bool-time"] in err and "valid integer" in err


def test_load_json_limits() -> None:
    assert load_json('{"a": [1, 2.5, "x", null, true]}', where="x") == {"a": [1, 2.5, "x", None, True]}
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert load_json(nested, where="x") is not None
    with pytest.raises(InputError, match=f"nested more than {MAX_DEPTH}"):
        load_json("[" + nested + "]", where="x")
    for text in ("1e999", "-Infinity", "9" * 19):
        with pytest.raises(InputError, match="x line 1 column 1: invalid JSON"):
            load_json(text, where="x")
    with pytest.raises(InputError, match="not UTF-8"):
        load_json(b"\xff{}", where="x")
    # A byte order mark (Notepad's UTF-8) was "Unexpected UTF-8 BOM": JSON readers may ignore it, and do.
    assert load_json(b'\xef\xbb\xbf{"a": 1}', where="x") == load_json('\ufeff{"a": 1}', where="x") == {"a": 1}
    with pytest.raises(InputError, match="invalid JSON"):
        load_json('{"a": 1}\ufeff', where="x")  # only a leading one is a byte order mark
    shared: list[object] = [1]
    for _ in range(30):  # a YAML alias bomb decodes to shared lists: 2**30 leaves if walked naively
        shared = [shared, shared]
    with pytest.raises(InputError, match="more than"):
        check_document({"a": shared}, where="y.yaml")


@pytest.mark.parametrize("text", ["[" * 5000, b'{"a":' * 5000])
def test_loads_reports_nesting_json_cannot_decode_as_malformed_json(text: str | bytes) -> None:
    with pytest.raises(json.JSONDecodeError, match="nested too deep to decode"):
        loads(text)
    assert loads(b'{"a": [1]}') == {"a": [1]}


def test_a_yaml_set_is_held_to_the_same_limits() -> None:
    """`!!set` loads as a Python set, which check_document did not walk: its integers and its size escaped."""
    with pytest.raises(InputError, match="integer out of range"):
        check_document(yaml.safe_load("nodes: !!set {" + "9" * 40 + "}"), where="w.yaml")
    with pytest.raises(InputError, match="more than"):
        check_document({"s": set(range(MAX_NODES + 1))}, where="w.yaml")
    with pytest.raises(InputError, match="integer out of range"):
        check_document((1, 10**40), where="py")
    check_document(yaml.safe_load("nodes: !!set {a, b}"), where="w.yaml")  # a small set passes
