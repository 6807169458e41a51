"""Shared by the `alas bench llm` command tests (tests/cli/test_llm_*_command_edges.py): a spy that wraps a
module's function (the real one still runs, so the figures that come back are real), and a process with no LLM
endpoint from the machine."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

__all__ = ["Spy", "without_llm_endpoint"]

#: Every variable an LLM endpoint can come from.
LLM_ENVIRONMENT = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ALAS_LLM__BASE_URL", "ALAS_LLM__API_KEY", "ALAS_LLM__MODEL")


class Spy:
    """Wraps ``module.name``: records each call's arguments, then calls the real one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: ModuleType, name: str) -> None:
        self.real = getattr(module, name)
        self.calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        monkeypatch.setattr(module, name, self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls.append((args, kwargs))
        return self.real(*args, **kwargs)


def without_llm_endpoint(monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
    """No endpoint from the machine, and ``directory`` as the working directory (the commands write
    bench/results and read bench/llm_prices.json under it)."""
    for var in LLM_ENVIRONMENT:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(directory)
