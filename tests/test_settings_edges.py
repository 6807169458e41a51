"""Edges of alas_argo.settings left open by mutation testing: every conventional variable reaching its field,
the ``ALAS_*`` variable winning over it even when it says the default, flags winning over both, an empty
conventional variable ignored, every secret registered for scrubbing (on a fresh registry), and a bad value
naming the variable it came from: the conventional one, the ``ALAS_*`` one even when a flag sets the same field,
or the command line."""

from __future__ import annotations

import os
from typing import Any

import pytest

from alas_argo import scrubbing
from alas_argo.cli import main
from alas_argo.errors import InputError
from alas_argo.settings import Settings, load_settings

#: (group, field, conventional variable, value, what the field holds).
CONVENTIONAL = [
    ("llm", "base_url", "OPENAI_BASE_URL", "http://llm.local:8000/v1", "http://llm.local:8000/v1"),
    ("llm", "api_key", "OPENAI_API_KEY", "sk-conventional-4e1f", "sk-conventional-4e1f"),
    ("store", "s3_access_key", "AWS_ACCESS_KEY_ID", "AKIACONVENTIONAL", "AKIACONVENTIONAL"),
    ("store", "s3_secret_key", "AWS_SECRET_ACCESS_KEY", "conventional-secret-9a", "conventional-secret-9a"),
    ("store", "s3_region", "AWS_DEFAULT_REGION", "eu-west-1", "eu-west-1"),
    ("argo", "host", "ARGO_SERVER", "argo.example:2746", "argo.example:2746"),
    ("argo", "token", "ARGO_TOKEN", "argo-token-conventional", "argo-token-conventional"),
    ("argo", "namespace", "ARGO_NAMESPACE", "workflows", "workflows"),
    ("argo", "secure", "ARGO_SECURE", "false", False),
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ALAS_* or conventional variable of the machine running the tests."""
    for name in list(os.environ):
        if name.upper().startswith("ALAS_"):
            monkeypatch.delenv(name)
    for *_, var, _, _ in CONVENTIONAL:
        monkeypatch.delenv(var, raising=False)


def _field(settings: Settings, group: str, field: str) -> Any:
    value = getattr(getattr(settings, group), field)
    return value.get_secret_value() if hasattr(value, "get_secret_value") else value


def _alas(group: str, field: str) -> str:
    return f"ALAS_{group.upper()}__{field.upper()}"


@pytest.mark.parametrize(("group", "field", "var", "value", "holds"), CONVENTIONAL)
def test_each_conventional_variable_reaches_its_field(group: str, field: str, var: str, value: str, holds: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    default = _field(load_settings(), group, field)
    assert default != holds
    monkeypatch.setenv(var, value)
    assert _field(load_settings(), group, field) == holds
    monkeypatch.setenv(_alas(group, field), "true" if field == "secure" else "from-alas-variable")
    assert _field(load_settings(), group, field) == (True if field == "secure" else "from-alas-variable")
    monkeypatch.setenv(var, "")  # an empty variable (a chart value left blank) is no value
    monkeypatch.delenv(_alas(group, field))
    assert _field(load_settings(), group, field) == default


@pytest.mark.parametrize(("var", "value", "alas", "default"), [
    ("AWS_DEFAULT_REGION", "eu-west-1", "ALAS_STORE__S3_REGION", "us-east-1"),
    ("ARGO_NAMESPACE", "workflows", "ALAS_ARGO__NAMESPACE", "argo"),
    ("ARGO_SECURE", "false", "ALAS_ARGO__SECURE", "true"),
])
def test_an_alas_variable_wins_even_when_it_says_the_default(var: str, value: str, alas: str, default: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The ALAS_* variable was taken as unset when its value equalled the default, and the conventional one won:
    ALAS_ARGO__NAMESPACE=argo submitted into the shell's ARGO_NAMESPACE."""
    monkeypatch.setenv(var, value)
    monkeypatch.setenv(alas, default)
    settings = load_settings()
    assert (settings.store.s3_region, settings.argo.namespace, settings.argo.secure) == ("us-east-1", "argo", True)


def test_a_flag_wins_over_both_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARGO_NAMESPACE", "conventional")
    monkeypatch.setenv("ALAS_ARGO__NAMESPACE", "alas")
    assert load_settings(argo={"namespace": "flag"}).argo.namespace == "flag"
    assert load_settings(argo={"namespace": None}).argo.namespace == "alas"


def test_every_secret_setting_is_registered_for_scrubbing(monkeypatch: pytest.MonkeyPatch) -> None:
    """On an empty registry: values registered by earlier tests in the same process cannot stand in."""
    monkeypatch.setattr(scrubbing, "_secrets", ())
    secrets = {"OPENAI_API_KEY": "llm-key-3b8e0c", "ARGO_TOKEN": "argo-token-7c1d9e",
               "ALAS_CONTROLLER__TOKEN": "controller-token-55aa", "AWS_SECRET_ACCESS_KEY": "s3-secret-0b9f2d",
               "AWS_ACCESS_KEY_ID": "s3-access-77e1c3", "ALAS_STORE__LOG_KEY": "log-key-of-16-characters"}
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("ALAS_ARGO__NAMESPACE", "namespace-not-secret")
    load_settings()
    assert sorted(scrubbing.registered()) == sorted(secrets.values())


@pytest.mark.parametrize(("env", "overrides", "where", "message"), [
    # The conventional variable was named as ALAS_ARGO__SECURE, which nobody had set.
    ({"ARGO_SECURE": "maybe"}, {}, "ARGO_SECURE",
     "invalid setting argo.secure: Input should be a valid boolean, unable to interpret input"),
    ({"ARGO_SECURE": "maybe", "ALAS_ARGO__SECURE": "false"}, {}, None, None),
    ({"ARGO_SECURE": "maybe"}, {"argo": {"secure": False}}, None, None),
    # A valid flag over a bad ALAS_* variable: the flag wins, the variable under it is not read (it was refused,
    # and before that blamed on the command line), as a conventional variable under a flag is not.
    ({"ALAS_CONTROLLER__PORT": "abc"}, {"controller": {"port": 8080}}, None, None),
    ({"ALAS_CONTROLLER__PORT": "abc"}, {"controller": {"port": None}}, "ALAS_CONTROLLER__PORT",
     "invalid setting controller.port: Input should be a valid integer, unable to parse string as an integer"),
    ({"ALAS_CONTROLLER__PORT": "abc"}, {"controller": {"host": "127.0.0.1"}}, "ALAS_CONTROLLER__PORT",
     "invalid setting controller.port: Input should be a valid integer, unable to parse string as an integer"),
    ({"ALAS_CONTROLLER__PORT": "8081"}, {"controller": {"port": "abc"}}, "command line",
     "invalid setting controller.port: Input should be a valid integer, unable to parse string as an integer"),
    ({"ALAS_SOLVER__SEED": "-1"}, {"store": {"kind": "s3"}}, "ALAS_SOLVER__SEED",
     "invalid setting solver.seed: Input should be greater than or equal to 0"),
])
def test_a_bad_value_names_where_it_came_from(env: dict[str, str], overrides: dict[str, dict[str, Any]],
                                              where: str | None, message: str | None,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    if where is None:
        settings = load_settings(**overrides)  # the bad value is not used
        for group, fields in overrides.items():
            assert {f: getattr(getattr(settings, group), f) for f in fields} == fields
        return
    with pytest.raises(InputError) as caught:
        load_settings(**overrides)
    assert (caught.value.where, caught.value.message) == (where, message)


def test_a_bad_conventional_variable_is_one_line_naming_it(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("ARGO_SECURE", "sometimes")
    assert main(["log", "ls", "--root", "/nonexistent-alas"]) == 2
    err = capsys.readouterr().err
    assert err == "alas: error: ARGO_SECURE: invalid setting argo.secure: Input should be a valid boolean, " \
                  "unable to interpret input\n"


@pytest.mark.parametrize("value", ["a b", "eu_west_1", "-east", "é", "x" * 64])
@pytest.mark.parametrize("variable", ["ALAS_STORE__S3_REGION", "AWS_DEFAULT_REGION"])
def test_a_region_botocore_would_refuse_is_named_at_its_variable(monkeypatch: pytest.MonkeyPatch, variable: str,
                                                                 value: str) -> None:
    # botocore raises InvalidRegionError from inside the client's constructor: a traceback, before this check.
    monkeypatch.setenv(variable, value)
    with pytest.raises(InputError, match=r"invalid setting store\.s3_region: not a region name") as caught:
        load_settings()
    assert caught.value.where == variable


@pytest.mark.parametrize("value", ["us-east-1", "eu-west-1", "local", "x" * 63])
def test_regions_of_every_shape_botocore_takes_load(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("ALAS_STORE__S3_REGION", value)
    assert load_settings().store.s3_region == value
