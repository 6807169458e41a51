"""Every parser of outside input, fuzzed: 10,000 hostile inputs each, zero tracebacks, zero hangs.

A parser answers bad input with the project's own error (one line at the CLI, 4xx at the controller); any
other exception is a test failure with its traceback. The pytest timeout turns a hang into a failure.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest

from alas_argo.benchmarks.repair_report import from_csv, lcrp_ratios, size_ratios, summarize
from alas_argo.cli.ir_commands import load_document
from alas_argo.cli.validating import load_disruption_file, load_schedule_file
from alas_argo.controller.contracts import parse_request
from alas_argo.ir.validation import validate_document
from alas_argo.json_limits import load_json
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption_rules import check_disruption
from alas_argo.jssp.formats import parse_instance_text
from alas_argo.jssp.planning import plan
from alas_argo.jssp.validate import validate
from alas_argo.log.plans import decode_plan, encode_plan
from alas_argo.pipeline import load_disruptions
from tests.fuzz.hostile import EXAMPLES, fuzz, json_text, mutate, noise

pytestmark = pytest.mark.timeout(240)

FT06 = get_instance("ft06")
SCHEDULE = plan(FT06, time_limit=1, method="dispatch").schedule
DISRUPTION = {"time": 10, "events": [{"kind": "machine_breakdown", "machine": 1, "start": 10, "duration": 5},
                                     {"kind": "duration_change", "job": 2, "step": 3, "duration": 9}]}
REQUEST = {**DISRUPTION, "method": "right-shift", "budget": 1, "effort": 1}
SMALL_SCHEDULE = {**SCHEDULE.to_json(), "operations": SCHEDULE.to_json()["operations"][:4]}


def _write(path: Path, text: str) -> str:
    """Write ``text`` (bad UTF-8 included) to ``path`` as a new file and return the path's name.

    A new file each time, not the old one truncated: ext4 flushes a file truncated and rewritten when it is
    closed (auto_da_alloc), 1.7 ms a write on this machine's disk against 0.03 ms, most of these tests' time.
    """
    path.unlink(missing_ok=True)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    return str(path)


def _writer(path: Path, build: Any) -> Any:
    """A builder that writes the built text to ``path`` and returns the path's name."""
    return lambda rng: _write(path, build(rng))


def test_json_limits() -> None:
    assert fuzz(lambda rng: json_text(DISRUPTION, rng), lambda text: load_json(text, where="x")) >= EXAMPLES


def test_instance_text_formats() -> None:
    taillard, orlib = "2 2\n3 4\n5 6\n1 2\n2 1\n", "2 2\n0 3 1 4\n1 5 0 6\n"
    json_base = {"name": "fuzz", "jobs": [[[0, 3], [1, 4]], [[1, 5], [0, 6]]], "upper_bound": 12}
    # " 99999999999999999 ": short enough to read as a number, too long for a duration (MAX_TIME).
    splices = ["9" * 5000, "-1", "1e400", "x", "\n", "99999 9999\n", "0", "true", ".5", "100001 2\n", "2 10001\n",
               " 99999999999999999 "]

    def build(rng: random.Random) -> str:
        kind = rng.randrange(3)
        if kind == 0:
            return json_text(json_base, rng)
        if kind == 1:
            text = rng.choice([taillard, orlib])
            for _ in range(rng.randrange(1, 3)):
                at = rng.randrange(len(text) + 1)
                text = text[:at] + rng.choice(splices) + text[at:]
            return text
        return noise(rng, "0123456789 -\n.e,")

    assert fuzz(build, lambda text: parse_instance_text(text, name="fuzz", where="f.txt")) >= EXAMPLES


def test_schedule_file_and_validation(tmp_path: Path) -> None:
    def parse(name: str) -> None:
        validate(FT06, load_schedule_file(name, FT06))

    assert fuzz(_writer(tmp_path / "s.json", lambda rng: json_text(SMALL_SCHEDULE, rng)), parse) >= EXAMPLES


def test_disruption_file_validation_and_repair_checks(tmp_path: Path) -> None:
    def parse(name: str) -> None:
        disruption = load_disruption_file(name, FT06)
        check_disruption(FT06, SCHEDULE, disruption, source=name)
        validate(FT06, SCHEDULE, disruption=disruption, baseline=SCHEDULE)

    assert fuzz(_writer(tmp_path / "d.json", lambda rng: json_text(DISRUPTION, rng)), parse) >= EXAMPLES


def test_run_disruption_lists(tmp_path: Path) -> None:
    base = [DISRUPTION, {**DISRUPTION, "time": 12}]
    assert fuzz(_writer(tmp_path / "d.json", lambda rng: json_text(base, rng)),
                lambda name: load_disruptions(Path(name))) >= EXAMPLES


def test_controller_request_bodies() -> None:
    def build(rng: random.Random) -> bytes:
        if rng.random() < 0.1:
            return rng.randbytes(rng.randrange(40))
        return json_text(REQUEST, rng).encode("utf-8", "surrogatepass")

    assert fuzz(build, parse_request) >= EXAMPLES


def zlib_bomb(mib: int) -> bytes:
    """A plan object that inflates to ``mib`` MiB of spaces inside a valid envelope (a few KB stored)."""
    head = b'{"format": "alas-plan/1", "doc": {"instance": "x"'
    return gzip.compress(head + b" " * (mib * 2**20) + b"}}", compresslevel=9, mtime=0)


def test_a_plan_object_that_inflates_past_the_limit_is_refused() -> None:
    from alas_argo.errors import IntegrityError
    from alas_argo.log.plans import MAX_PLAN_BYTES

    bomb = zlib_bomb(MAX_PLAN_BYTES // 2**20 + 8)
    assert len(bomb) < MAX_PLAN_BYTES // 500  # small stored, huge inflated
    with pytest.raises(IntegrityError, match="inflates to more than"):
        decode_plan(bomb, where="runs/r/plans/1")
    small = zlib_bomb(1)
    assert decode_plan(small, where="runs/r/plans/1") == {"instance": "x"}  # within the limit it decodes


def test_plan_objects() -> None:
    envelope = {"format": "alas-plan/1", "doc": SMALL_SCHEDULE}
    fixed = [encode_plan(SMALL_SCHEDULE), gzip.compress(b"{" * 100_000, mtime=0)]

    def build(rng: random.Random) -> bytes:
        kind = rng.randrange(5)
        if kind == 0:
            return rng.choice(fixed)
        if kind == 1:
            return rng.randbytes(rng.randrange(60))
        data = gzip.compress(json_text(envelope, rng).encode("utf-8", "surrogatepass"), mtime=0)
        return data[: rng.randrange(len(data) + 1)] if kind == 2 else data

    assert fuzz(build, lambda data: decode_plan(data, where="runs/r/plans/1")) >= EXAMPLES


def test_workflow_documents(tmp_path: Path) -> None:
    from alas_argo.engines.rendering import load_definitions

    builders = load_definitions()
    base = builders[sorted(builders)[0]]().to_json()
    yaml_cases = ["a: &a [*a]", "a: " + "[" * 3000, "n: " + "9" * 5000, "- &x [1,2]\n- [*x, *x]",
                  "x: !!python/object:os.system ls", "t: 2001-13-45", ":\n  - {", "a: .nan", "a: !!binary x"]
    paths = {"json": tmp_path / "w.json", "yaml": tmp_path / "w.yaml"}

    def build(rng: random.Random) -> str:
        kind = rng.choice(["json", "yaml"])
        text = rng.choice(yaml_cases) if kind == "yaml" and rng.random() < 0.2 else json_text(base, rng)
        return _write(paths[kind], text)

    def parse(name: str) -> None:
        loaded = load_document(name)
        if isinstance(loaded, dict):
            validate_document(loaded)

    assert fuzz(build, parse) >= EXAMPLES


def test_repair_benchmark_csv() -> None:
    header = ("instance,size,scenario,seed,method,baseline_makespan,makespan,moved_operations,total_start_shift,"
              "edit_radius,neighbourhood_growths,wip_moved,fallback,seconds,valid,error\n")
    rows = ["ft06,6x6,breakdown,0,lcrp,55,60,3,7,4,0,0,False,0.1,True,\n",
            "ft06,6x6,breakdown,0,full,55,58,9,20,36,0,0,False,1.2,True,\n"]
    cells = ["0", "-1", "9" * 30, "nan", "inf", "", "True", "x", "\x00", '"', "1e400", "0.0", "lcrp@0", "a,b"]

    def build(rng: random.Random) -> str:
        if rng.random() < 0.1:
            return noise(rng)
        lines = [header, *rows]
        for _ in range(rng.randrange(0, 4)):
            i = rng.randrange(len(lines))
            parts = lines[i].rstrip("\n").split(",")
            parts[rng.randrange(len(parts))] = rng.choice(cells) if rng.random() < 0.8 else noise(rng)
            lines[i] = ",".join(parts) + "\n"
        return "".join(lines)

    def parse(text: str) -> None:
        found = from_csv(text, source="repair.csv")
        summarize(found), lcrp_ratios(found), size_ratios(found)

    assert fuzz(build, parse) >= EXAMPLES


def test_mutations_reach_past_the_json_layer() -> None:
    """The inputs are not all rejected at the first gate: a share of mutated disruptions parse and reach the
    rules (so the fuzzing exercises the models and the rules, not just the JSON decoder)."""
    from alas_argo.errors import InputError

    reached = 0
    rng = random.Random(7)
    for _ in range(500):
        try:
            load_json(json.dumps(mutate(DISRUPTION, rng)), where="x")
            reached += 1
        except InputError:
            pass
    assert reached > 250


def test_an_input_a_parser_chokes_on_fails_the_run_with_the_seed_that_rebuilds_it() -> None:
    """The harness itself: an error that is not the project's stops the run, and its note names the seed from
    which ``build`` makes the same input again."""
    built: list[str] = []

    def build(rng: random.Random) -> str:
        built.append(json_text(DISRUPTION, rng))
        return built[-1]

    def parse(text: str) -> None:
        if len(built) == 37:
            raise ValueError("choked")
        load_json(text, where="x")

    with pytest.raises(ValueError, match="choked") as caught:
        fuzz(build, parse)
    note = caught.value.__notes__[-1]
    assert note.startswith("fuzz input 37 of 10000: seed ")
    assert json_text(DISRUPTION, random.Random(int(note.rsplit(" ", 1)[1]))) == built[-1]
    assert fuzz(build, parse, examples=20) == 20
