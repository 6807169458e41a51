"""`alas llm ping` and `alas bench llm` at their edges: every figure ping prints, the --compare table and usage
line, which experiment each flag combination runs, and the flags' refusals (exit 2, naming the flag)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from alas_argo.cli import main
from tests.agents.llm_server import ScriptedLlmServer, running_server


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


@pytest.fixture(autouse=True)
def no_ambient_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ALAS_LLM__BASE_URL", "ALAS_LLM__API_KEY", "ALAS_LLM__MODEL"):
        monkeypatch.delenv(var, raising=False)


# -- the flags' refusals -------------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--repair-budget", "--reference-budget"])
@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_budget_must_be_a_finite_number(flag: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`type=float` took nan and inf, and a NaN passes the experiment's `<= 0` check: `--repair-budget nan` ran
    the whole experiment and printed "LCRP budget nan s". Now argparse refuses it before any work (exit 2)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(["bench", "llm", "--planner", "simulated", "--disruptions", "breakdown", "--suite", "ft06",
              "--seeds", "1", "--variants", "alas", flag, value, "--out", "o"])
    assert stopped.value.code == 2
    assert f"argument {flag}: not a finite number: '{value}'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
