"""Settings: defaults, ALAS_* env, conventional env names, explicit overrides, validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from alas_argo.settings import StoreKind, load_settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ALAS_STORE__KIND", "OPENAI_BASE_URL", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(var, raising=False)
    s = load_settings()
    assert s.store.kind is StoreKind.FS and str(s.store.root) == ".alas"
    assert s.solver.workers == 2


def test_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://conventional")
    monkeypatch.setenv("ALAS_STORE__KIND", "s3")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("ALAS_STORE__S3_REGION", "eu-central-1")
    s = load_settings(solver={"time_limit": 3.5, "seed": None})
    assert s.llm.base_url == "http://conventional"
    assert s.store.kind is StoreKind.S3
    assert s.store.s3_region == "eu-central-1"  # ALAS_* wins over the conventional name
    assert s.solver.time_limit == 3.5 and s.solver.seed == 0  # None overrides are ignored


def test_rejects_bad_values() -> None:
    with pytest.raises(ValidationError):
        load_settings(solver={"workers": 0})
    with pytest.raises(ValidationError):
        load_settings(store={"kind": "ftp"})
