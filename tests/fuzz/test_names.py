"""Names users give that the system cannot use: a segment past the 255-byte limit (``Path.exists()``,
``is_file()`` and ``mkdir`` raise OSError for it, where a missing name is an answer), and a directory under a
file. Every command that takes a file or directory, from a flag or from the environment, answers with one line
(exit 2) before it does any work, and writes nothing. A sweep of the commands' flags and variables found such
names to be tracebacks in the output checks every `--out` goes through and in a dozen other places, three of them
after the whole run (`bench llm`, `bench llm --disruptions`, `bench ablation`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from alas_argo.cli import main
from alas_argo.jssp.catalog import get_instance
from alas_argo.jssp.disruption import generate_disruption
from alas_argo.jssp.planning import plan

LONG = "x" * 300
#: Each command with NAME where the name goes ({S}: a valid ft06 schedule, {D}: a disruption of it).
COMMANDS = [
    ["solve", "ft06", "--time-limit", "0.1", "--out", "NAME"],
    ["disrupt", "--instance", "ft06", "--schedule", "{S}", "--out", "NAME"],
    ["repair", "--instance", "ft06", "--schedule", "{S}", "--disruption", "{D}", "--time-limit", "0.2", "--out",
     "NAME"],
    ["gantt", "--instance", "ft06", "--schedule", "{S}", "--out", "NAME.png"],
    ["validate", "--instance", "ft06", "--schedule", "NAME"],
    ["validate", "--instance", "NAME", "--schedule", "{S}"],
    ["run", "ft06", "--time-limit", "0.2", "--root", "store", "--out", "NAME"],
    ["run", "ft06", "--time-limit", "0.2", "--root", "NAME", "--out", "out"],
    ["log", "ls", "--root", "NAME"],
    ["bench", "static", "--suite", "ft06", "--time-limit", "0.1", "--out", "NAME"],
    ["bench", "repair", "--from-csv", "NAME", "--out", "out"],
    ["bench", "ablation", "--suite", "ft06", "--trials", "1", "--time-limit", "0.1", "--out", "NAME"],
    ["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1", "--out", "NAME"],
    ["bench", "llm", "--planner", "simulated", "--suite", "ft06", "--seeds", "1", "--record", "NAME", "--json"],
    ["bench", "llm", "--suite", "ft06", "--seeds", "1", "--replay", "NAME", "--json"],
    ["ir", "export", "alas-plan", "--out", "NAME"],
    ["render", "--out", "NAME", "--no-chart"],
]
#: Commands reading a name from the environment: (variable, command).
VARIABLES = [
    ("ALAS_STORE__ROOT", ["run", "ft06", "--time-limit", "0.2", "--out", "out"]),
    ("ALAS_STORE__ROOT", ["log", "ls"]),
    ("ALAS_WORKFLOWS_DIR", ["render", "--out", "out", "--no-chart"]),
]


@pytest.fixture
def inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A working directory holding a schedule, a disruption of it and a plain file, and nothing else."""
    monkeypatch.chdir(tmp_path)
    for name in ("ALAS_STORE__ROOT", "ALAS_WORKFLOWS_DIR", "OPENAI_BASE_URL", "ALAS_LLM__BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    inst = get_instance("ft06")
    schedule = plan(inst, time_limit=1, method="dispatch").schedule
    Path("s.json").write_text(schedule.model_dump_json())
    Path("d.json").write_text(generate_disruption(inst, schedule, kind="breakdown", seed=0).model_dump_json())
    Path("afile").write_text("")
    return {"{S}": "s.json", "{D}": "d.json"}


def _argv(template: list[str], name: str, inputs: dict[str, str]) -> list[str]:
    return [inputs.get(a, a).replace("NAME", name) for a in template]


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)  # an OSError or UnicodeError would propagate: the traceback these names used to give
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2, err
    assert err[-1].startswith("alas: error: ")
    return err[-1]


@pytest.mark.parametrize("template", COMMANDS, ids=lambda t: " ".join(t[:2]) + " " + t[t.index(
    next(a for a in t if "NAME" in a)) - 1])
@pytest.mark.parametrize("name", [LONG, "afile/x"], ids=["too-long", "under-a-file"])
def test_a_name_the_command_cannot_use_is_one_line_and_nothing_is_written(
        template: list[str], name: str, inputs: dict[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    line = _refused(_argv(template, name, inputs), capsys)
    assert ("afile" if name == "afile/x" else LONG[:20]) in line  # the line names what it refused
    assert sorted(p.name for p in Path().iterdir()) == ["afile", "d.json", "s.json"]


@pytest.mark.parametrize(("variable", "argv"), VARIABLES, ids=lambda v: v if isinstance(v, str) else v[0])
def test_a_name_from_the_environment_the_system_cannot_look_up_is_one_line(
        variable: str, argv: list[str], inputs: dict[str, str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(variable, LONG)
    assert LONG[:20] in _refused(argv, capsys)
    assert sorted(p.name for p in Path().iterdir()) == ["afile", "d.json", "s.json"]
