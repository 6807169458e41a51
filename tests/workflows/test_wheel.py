"""A non-editable install (the wheel, nothing of the checkout beside it) has the workflow definitions:
`alas render` writes the same files as the goldens, and the commands that read the definitions work."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from alas_argo.engines.rendering import repo_root

ROOT = repo_root()

# Building the wheel and a venv: 15-25 s measured on a loaded 2-core machine.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def _alas(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ALAS_WORKFLOWS_DIR")}
    return subprocess.run([str(bin_dir / "alas"), *args], capture_output=True, text=True, env=env, cwd=cwd,
                          check=False)


def test_the_wheel_runs_from_site_packages(installed: Path, tmp_path: Path) -> None:
    where = subprocess.run([str(installed / "python"), "-c", "import alas_argo; print(alas_argo.__file__)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path,
                           env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}).stdout
    assert str(installed.parent) in where, where  # not the checkout (an editable install's finder)


def test_render_from_the_wheel_writes_the_goldens(installed: Path, tmp_path: Path) -> None:
    done = _alas(installed, "render", cwd=tmp_path)  # default: ./workflows, no chart beside a wheel
    assert done.returncode == 0, done.stderr
    written = sorted(p.relative_to(tmp_path / "workflows").as_posix() for p in (tmp_path / "workflows").rglob("*.*"))
    assert written == sorted(p.relative_to(ROOT / "workflows").as_posix()
                             for p in (ROOT / "workflows").rglob("*.*") if p.suffix in (".yaml", ".json"))
    for rel in written:
        assert (tmp_path / "workflows" / rel).read_text() == (ROOT / "workflows" / rel).read_text(), rel
    checked = _alas(installed, "render", "--check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("args", [["ir", "export", "alas-plan"], ["ir", "export", "alas-repair", "--format", "yaml"],
                                  ["submit", "alas-bench", "--dry-run"], ["engines", "matrix"], ["--help"]])
def test_commands_reading_the_definitions_work_from_the_wheel(installed: Path, tmp_path: Path,
                                                              args: list[str]) -> None:
    done = _alas(installed, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout and "Traceback" not in done.stderr


def readme_commands() -> list[list[str]]:
    """Every command the README's command table lists (`alas log ls|show|diff|verify` is four), as argv."""
    found: list[list[str]] = []
    for line in (ROOT / "README.md").read_text().splitlines():
        if not line.startswith("| `alas "):
            continue
        for cell in re.findall(r"`alas ([a-z][a-z ]*[a-z](?:\\?\|[a-z|\\]+)?)", line.split(" | ")[0]):
            words = cell.replace("\\|", "|").split()
            heads, last = words[:-1], words[-1]
            for choice in last.split("|") if "|" in last and heads else [last]:
                argv = [*heads, choice] if heads else [choice]
                if argv not in found:
                    found.append(argv)
    return found


def test_the_readme_lists_the_commands_it_should() -> None:
    commands = readme_commands()
    assert ["run"] in commands and ["log", "verify"] in commands and ["bench", "llm"] in commands
    assert len(commands) >= 25, commands


@pytest.mark.parametrize("argv", readme_commands(), ids=" ".join)
def test_every_command_the_readme_lists_answers_help_from_the_wheel(installed: Path, tmp_path: Path,
                                                                    argv: list[str]) -> None:
    done = _alas(installed, *argv, "--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "usage: alas " + " ".join(argv) in done.stdout


def test_the_main_job_runs_from_the_wheel(installed: Path, tmp_path: Path) -> None:
    """The README's first command, from site-packages: plan, disrupt, repair, a valid plan and a verified log."""
    done = _alas(installed, "run", "ft06", "--disrupt", "breakdown", "--time-limit", "2", "--repair-budget", "2",
                 "--root", "store", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["final_valid"] is True and summary["status"] == "succeeded"
    verified = _alas(installed, "log", "verify", summary["run_id"], "--root", "store", "--json", cwd=tmp_path)
    assert verified.returncode == 0 and json.loads(verified.stdout)["ok"] is True, verified.stderr
