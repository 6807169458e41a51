"""Settings: defaults, ALAS_* env, conventional env names, explicit overrides, validation."""

from __future__ import annotations

import pytest

from alas_argo.cli import main
from alas_argo.errors import InputError
from alas_argo.settings import StoreKind, load_settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("ALAS_STORE__KIND", "OPENAI_BASE_URL", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(var, raising=False)
    s = load_settings()
    assert s.store.kind is StoreKind.FS and str(s.store.root) == ".alas"
    assert s.solver.seed == 0


def test_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://conventional")
    monkeypatch.setenv("ALAS_STORE__KIND", "s3")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("ALAS_STORE__S3_REGION", "eu-central-1")
    s = load_settings(solver={"seed": None})
    assert s.llm.base_url == "http://conventional"
    assert s.store.kind is StoreKind.S3
    assert s.store.s3_region == "eu-central-1"  # ALAS_* wins over the conventional name
    assert s.solver.seed == 0  # None overrides are ignored


def test_rejects_bad_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad value from the environment names its variable; one given as a flag (an override) names the command
    line, not a variable nobody set."""
    monkeypatch.setenv("ALAS_SOLVER__SEED", "-1")
    with pytest.raises(InputError) as seed:
        load_settings()
    assert seed.value.where == "ALAS_SOLVER__SEED" and "solver.seed" in seed.value.message
    monkeypatch.delenv("ALAS_SOLVER__SEED")
    with pytest.raises(InputError) as kind:
        load_settings(store={"kind": "ftp"})
    assert kind.value.where == "command line" and "store.kind" in kind.value.message


@pytest.mark.parametrize(("var", "value", "says"), [
    ("ALAS_CONTROLLER__PORT", "abc", "controller.port: Input should be a valid integer"),
    ("ALAS_STORE__KIND", "nfs", "store.kind: Input should be 'fs' or 's3'"),
    ("ALAS_STORE__LOG_KEY", "s3cr3t", "store.log_key"),
    # boto3 raised a bare ValueError ("Invalid endpoint") from the first store call: a traceback.
    ("ALAS_STORE__S3_ENDPOINT", "localhost:9000", "store.s3_endpoint: not an S3 endpoint: expected "
                                                  "http://host:port or https://host:port (e.g. http://minio:9000)"),
    ("ALAS_STORE__S3_ENDPOINT", "ftp://s3.local", "store.s3_endpoint: not an S3 endpoint")])
def test_an_invalid_setting_is_one_line_naming_its_variable(var: str, value: str, says: str,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong ALAS_* value is an InputError (exit 2, one line) naming the variable, never the value (it may be a
    secret) and never a pydantic traceback; the process that meets it first is usually a pod starting."""
    monkeypatch.setenv(var, value)
    assert main(["log", "ls", "--root", "/nonexistent-alas"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"alas: error: {var}: invalid setting {says}"), err
    assert "Traceback" not in err and (value not in err or var.endswith("KIND"))


def test_an_empty_s3_endpoint_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chart value left blank sets the variable to nothing: the store then talks to AWS, as with none."""
    monkeypatch.setenv("ALAS_STORE__S3_ENDPOINT", "")
    assert load_settings().store.s3_endpoint is None
    monkeypatch.setenv("ALAS_STORE__S3_ENDPOINT", "https://s3.example.com:443/base")
    assert load_settings().store.s3_endpoint == "https://s3.example.com:443/base"


def test_the_solver_fields_that_had_no_effect_are_gone_and_old_settings_still_load(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # ALAS_SOLVER__TIME_LIMIT was read by nothing, ALAS_SOLVER__WORKERS only by deterministic (one-worker) solves.
    monkeypatch.setenv("ALAS_SOLVER__TIME_LIMIT", "3.5")
    monkeypatch.setenv("ALAS_SOLVER__WORKERS", "8")
    monkeypatch.setenv("ALAS_SOLVER__SEED", "7")
    s = load_settings()
    assert s.solver.model_dump() == {"seed": 7}
