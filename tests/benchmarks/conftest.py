"""The LLM benchmarks' fixtures: a scripted OpenAI-compatible endpoint, and no endpoint from the environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agents.llm_server import ScriptedLlmServer, running_server

__all__ = ["llm_server", "no_ambient_endpoint"]


@pytest.fixture
def llm_server() -> Iterator[ScriptedLlmServer]:
    yield from running_server()


@pytest.fixture
def no_ambient_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """An endpoint configured on the machine must not turn a "no endpoint" test into a call."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ALAS_LLM__BASE_URL", "ALAS_LLM__API_KEY"):
        monkeypatch.delenv(var, raising=False)
