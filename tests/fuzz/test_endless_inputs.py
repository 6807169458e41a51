"""Input files are read with a bound (alas_argo.file_names.read_limited): `/dev/zero`, a FIFO that never ends or
a runaway file given as a schedule, instance, disruption, workflow, price table or table was read whole, and the
process grew until the kernel killed it (24 GB, then SIGKILL, for `alas validate --schedule /dev/zero` on the
machine of 2026-12-07). Each command that reads a file refuses one past the bound in one line (exit 2); the
bound is lowered to 1 MiB here so that the files stay small."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo import file_names
from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.planning import plan

BOUND = 2**20
#: Each command with BIG where the oversized file goes ({S}: a valid ft06 schedule, {D}: a disruption of it).
COMMANDS = [
    ["validate", "--instance", "ft06", "--schedule", "BIG"],
    ["validate", "--instance", "BIG", "--schedule", "{S}"],
    ["instance", "show", "BIG"],
    ["repair", "--instance", "ft06", "--schedule", "{S}", "--disruption", "BIG", "--out", "out"],
    ["gantt", "--instance", "ft06", "--schedule", "{S}", "--before", "BIG", "--out", "g.png"],
    ["disrupt", "--instance", "ft06", "--schedule", "BIG", "--out", "d2.json"],
    ["run", "ft06", "--disrupt", "BIG", "--root", "store", "--out", "out"],
    ["ir", "validate", "BIG"],
    ["engines", "lint", "BIG"],
    ["bench", "repair", "--from-csv", "BIG", "--out", "out"],
    ["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1", "--prices", "BIG", "--json"],
]


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(file_names, "MAX_FILE_BYTES", BOUND)
    inst = get_instance("ft06")
    schedule = plan(inst, time_limit=1, method="dispatch").schedule
    Path("s.json").write_text(schedule.model_dump_json())
    Path("d.json").write_text(generate_disruption(inst, schedule, kind="breakdown", seed=0).model_dump_json())
    # Valid JSON whitespace after a valid start: read whole, it would parse on to another error, not this one.
    Path("big.json").write_bytes(b"{" + b" " * BOUND + b"}")
    return {"{S}": "s.json", "{D}": "d.json", "BIG": "big.json"}


@pytest.mark.parametrize("template", COMMANDS, ids=lambda t: " ".join(t[:2]))
def test_a_file_past_the_bound_is_refused_in_one_line(template: list[str], inputs: dict[str, str],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main([inputs.get(a, a) for a in template]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == "alas: error: big.json: larger than 1 MiB (or never ends): not an input this reads"
    assert not Path("out").exists() and not Path("store").exists()
