"""`cli.llm_flags`: each endpoint flag reaches its own setting (the commands' tests give a URL, a model and
retries, never ``--llm-timeout``, so a timeout flag that silently did nothing went unseen), a flag wins over the
environment while an unset one leaves it alone, and a namespace without the flags (a command that does not add
them) reads the environment only. The usage line names each flag's value as the help describes it."""

from __future__ import annotations

import argparse

import pytest

from alas_argo.cli.llm_flags import add_llm_arguments, llm_settings_from_args


@pytest.fixture(autouse=True)
def _no_endpoint_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ALAS_LLM__BASE_URL", "ALAS_LLM__MODEL", "ALAS_LLM__TIMEOUT",
                 "ALAS_LLM__MAX_RETRIES", "ALAS_LLM__TEMPERATURE"):
        monkeypatch.delenv(name, raising=False)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="alas x")
    add_llm_arguments(parser)
    return parser


def test_every_flag_reaches_its_setting() -> None:
    args = _parser().parse_args(["--llm-base-url", "http://h:8000/v1", "--llm-model", "m-1", "--llm-timeout", "7.5",
                                 "--llm-retries", "4", "--llm-temperature", "0.7"])
    llm = llm_settings_from_args(args).llm
    assert (llm.base_url, llm.model, llm.timeout, llm.max_retries, llm.temperature) == \
        ("http://h:8000/v1", "m-1", 7.5, 4, 0.7)


def test_a_flag_wins_over_the_environment_and_an_unset_one_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAS_LLM__TIMEOUT", "12")
    monkeypatch.setenv("ALAS_LLM__MODEL", "env-model")
    llm = llm_settings_from_args(_parser().parse_args(["--llm-timeout", "3"])).llm
    assert (llm.timeout, llm.model) == (3.0, "env-model")


def test_a_namespace_without_the_flags_reads_the_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALAS_LLM__MAX_RETRIES", "5")
    llm = llm_settings_from_args(argparse.Namespace()).llm
    assert (llm.base_url, llm.model, llm.timeout, llm.max_retries, llm.temperature) == \
        (None, "gpt-4o-mini", 60.0, 5, 0.0)


def test_the_usage_line_names_each_value() -> None:
    usage = " ".join(_parser().format_usage().split())  # the wrapping follows the terminal's width
    assert usage == ("usage: alas x [-h] [--llm-base-url URL] [--llm-model NAME] [--llm-timeout SECONDS] "
                     "[--llm-retries N] [--llm-temperature T]")


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_temperature_that_is_no_finite_number_is_refused_by_the_flag(
        value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Refused where it is parsed, naming the flag (exit 2), not later by the settings' range check."""
    with pytest.raises(SystemExit) as exited:
        _parser().parse_args(["--llm-temperature", value])
    assert exited.value.code == 2
    assert capsys.readouterr().err.endswith(f"alas x: error: argument --llm-temperature: not a finite number: "
                                            f"'{value}'\n")
