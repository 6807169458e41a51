"""One typed settings object, read from the environment (and overridden by CLI flags) in one place.

Environment variables use the prefix ``ALAS_`` and ``__`` between group and field, e.g.
``ALAS_STORE__KIND=s3``, ``ALAS_STORE__S3_ENDPOINT=http://127.0.0.1:9000``. A few conventional variables are
honoured too (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
``AWS_DEFAULT_REGION``, ``ARGO_SERVER``, ``ARGO_TOKEN``, ``ARGO_NAMESPACE``).
"""

from __future__ import annotations

import os
import re
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from alas_argo.addresses import is_http_url
from alas_argo.bounds import MAX_RETRIES, MAX_WAIT_SECONDS
from alas_argo.errors import InputError, first_error
from alas_argo.scrubbing import register_secret
from alas_argo.seeds import MAX_SEED

__all__ = [
    "ArgoSettings",
    "ControllerSettings",
    "LlmSettings",
    "Settings",
    "SolverSettings",
    "StoreKind",
    "StoreSettings",
    "load_settings",
]


#: A region name as botocore accepts it.
_REGION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?")


class StoreKind(StrEnum):
    """Where the execution log lives."""

    FS = "fs"
    S3 = "s3"


class StoreSettings(BaseModel):
    """The execution log's backend."""

    kind: StoreKind = Field(StoreKind.FS, description="Backend: `fs` (a local directory) or `s3`.")
    root: Path = Field(Path(".alas"), description="Directory of the filesystem store.")
    s3_endpoint: str | None = Field(None, description="S3 endpoint URL (MinIO or any S3-compatible store).")
    s3_bucket: str = Field("alas", description="Bucket holding the log.")
    s3_prefix: str = Field("", description="Key prefix inside the bucket.")
    s3_region: str = Field("us-east-1", description="Region passed to the S3 client.")
    s3_access_key: SecretStr | None = Field(None, description="Access key id (else AWS_ACCESS_KEY_ID).")
    s3_secret_key: SecretStr | None = Field(None, description="Secret key (else AWS_SECRET_ACCESS_KEY).")
    connect_timeout: float = Field(3.0, gt=0, le=MAX_WAIT_SECONDS,
                                   description="Seconds to wait for a connection to the store.")
    read_timeout: float = Field(10.0, gt=0, le=MAX_WAIT_SECONDS, description="Seconds to wait for a store response.")
    max_retries: int = Field(4, ge=0, le=MAX_RETRIES, description="Retries of transient store errors, with backoff.")
    log_key: SecretStr | None = Field(None, min_length=16, description=(
        "Key of the execution log's keyed seals (HMAC-SHA256; at least 16 characters, from a Secret): "
        "with it, verify detects re-sealed events, rewritten heads and edited idempotency records."))

    @field_validator("s3_endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if not value:
            return None  # an empty variable (a chart value left blank) is no endpoint: AWS's own
        if not is_http_url(value):
            raise ValueError("not an S3 endpoint: expected http://host:port or https://host:port "
                             "(e.g. http://minio:9000)")
        return value

    @field_validator("s3_region")
    @classmethod
    def _region(cls, value: str) -> str:
        # botocore's own rule, checked here so a bad region is named at its variable, not a traceback from
        # inside the S3 client's constructor.
        if not _REGION.fullmatch(value):
            raise ValueError("not a region name: letters, digits and '-', at most 63 (e.g. us-east-1)")
        return value


class SolverSettings(BaseModel):
    """Defaults of the planners.

    No time limit or worker count here: every command takes ``--time-limit`` (and ``--workers`` with
    ``--wall-clock``), and the controller's repairs run on CP-SAT's deterministic time on one worker, so that
    replay reproduces them. The ``time_limit`` and ``workers`` once here had no effect (nothing read the first;
    the second reached only deterministic solves, which use one worker); settings that still name them load,
    since extra fields are ignored."""

    seed: int = Field(0, ge=0, le=MAX_SEED, description="Seed of `alas llm compare`'s CP-SAT baseline.")


class LlmSettings(BaseModel):
    """The OpenAI-compatible planner backend."""

    base_url: str | None = Field(None, description="Chat-completions base URL (else OPENAI_BASE_URL).")
    model: str = Field("gpt-4o-mini", description="Model name sent with each request.")
    api_key: SecretStr | None = Field(None, description="Bearer token (else OPENAI_API_KEY).")
    timeout: float = Field(60.0, gt=0, le=MAX_WAIT_SECONDS, description="Seconds per HTTP call.")
    max_retries: int = Field(3, ge=0, le=MAX_RETRIES, description="Retries on 429 / 5xx, honouring Retry-After.")
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature (the paper's baselines: 1.0).")


class ArgoSettings(BaseModel):
    """Where `alas submit` sends workflows."""

    host: str | None = Field(None, description="Argo server URL (else ARGO_SERVER).")
    token: SecretStr | None = Field(None, description="Bearer token (else ARGO_TOKEN).")
    namespace: str = Field("argo", description="Namespace to submit into (else ARGO_NAMESPACE).")
    image: str = Field("ghcr.io/alas-argo/alas:0.1.0", description="Image every template runs.")
    verify_ssl: bool = Field(True, description="Verify the Argo server's TLS certificate.")
    secure: bool = Field(True, description="For a host given as host:port, the form `argo` takes in ARGO_SERVER: "
                         "https when true, http when false (else ARGO_SECURE).")
    timeout: float = Field(30.0, gt=0, le=3600, description="Seconds to wait for the Argo server's answer.")


class ControllerSettings(BaseModel):
    """The long-running repair service."""

    host: str = Field("127.0.0.1", description="Address to bind.")
    port: int = Field(8080, ge=0, le=65535, description="Port to bind (0 picks a free one).")
    token: SecretStr | None = Field(None, description="Bearer token clients must present.")
    max_body_bytes: int = Field(1_048_576, gt=0, description="Largest request body accepted.")


class Settings(BaseSettings):
    """Every setting of the project, grouped."""

    model_config = SettingsConfigDict(env_prefix="ALAS_", env_nested_delimiter="__", extra="ignore")

    store: StoreSettings = Field(default_factory=StoreSettings, description="Execution log backend.")
    solver: SolverSettings = Field(default_factory=SolverSettings, description="Planner defaults.")
    llm: LlmSettings = Field(default_factory=LlmSettings, description="LLM planner backend.")
    argo: ArgoSettings = Field(default_factory=ArgoSettings, description="Argo server for `alas submit`.")
    controller: ControllerSettings = Field(default_factory=ControllerSettings, description="Repair service.")


#: The ecosystem's conventional variables, by the settings field each stands for.
_CONVENTIONAL = {
    ("llm", "base_url"): "OPENAI_BASE_URL",
    ("llm", "api_key"): "OPENAI_API_KEY",
    ("store", "s3_access_key"): "AWS_ACCESS_KEY_ID",
    ("store", "s3_secret_key"): "AWS_SECRET_ACCESS_KEY",
    ("store", "s3_region"): "AWS_DEFAULT_REGION",
    ("argo", "host"): "ARGO_SERVER",
    ("argo", "token"): "ARGO_TOKEN",
    ("argo", "namespace"): "ARGO_NAMESPACE",
    ("argo", "secure"): "ARGO_SECURE",
}


def _conventional_env() -> dict[str, dict[str, Any]]:
    """Map the ecosystem's conventional variables onto settings fields."""
    found: dict[str, dict[str, Any]] = {}
    for (group, field), var in _CONVENTIONAL.items():
        if os.environ.get(var):
            found.setdefault(group, {})[field] = os.environ[var]
    return found


def load_settings(**overrides: dict[str, Any]) -> Settings:
    """Build the settings: defaults < conventional env vars < ``ALAS_*`` env vars < explicit overrides.

    Args:
        **overrides: Per group, the fields given on the command line, e.g. ``store={"kind": "s3"}``.
            ``None`` values are ignored so that unset flags do not clobber the environment.
    """
    flags = {group: given for group, fields in overrides.items()
             if (given := {f: v for f, v in (fields or {}).items() if v is not None})}
    try:
        # The ALAS_* variables under the flags: a field a flag gives is not read from the environment, as the
        # conventional variables under a flag are not (a flag wins over both, even over a bad value).
        base = Settings(**cast(Any, flags))  # __init__, not model_validate: only __init__ reads the environment
    except ValidationError as e:
        where, message = first_error(e)
        group, _, field = where.partition(".")
        # Name the flag's side, or the variable: not a variable never set. The value is left out: it may be a
        # secret.
        source = "command line" if field in flags.get(group, {}) else _variable(where)
        raise InputError(f"invalid setting {where}: {message}", where=source) from None
    try:
        return _load(base, flags)
    except ValidationError as e:
        where, message = first_error(e)
        group, _, field = where.partition(".")
        # The value came from a conventional variable (the flags and the ALAS_* values were valid above).
        var = _CONVENTIONAL.get((group, field)) or _variable(where)
        raise InputError(f"invalid setting {where}: {message}", where=var) from None


def _variable(where: str) -> str:
    """The ``ALAS_*`` variable of a dotted setting, ``store.kind`` -> ``ALAS_STORE__KIND``."""
    return "ALAS_" + where.upper().replace(".", "__")


def _load(base: Settings, overrides: dict[str, dict[str, Any]]) -> Settings:
    merged: dict[str, Any] = {}
    conventional = _conventional_env()
    for group in Settings.model_fields:
        current = getattr(base, group).model_dump()
        given = getattr(base, group).model_fields_set  # the fields a flag or an ALAS_* variable set, to any value
        for field, value in conventional.get(group, {}).items():
            if field not in given:  # ALAS_* wins over the conventional name, even when it says the default
                current[field] = value
        current.update(overrides.get(group, {}))
        merged[group] = current
    settings = Settings.model_validate(merged)
    for group in Settings.model_fields:
        for value in getattr(settings, group).__dict__.values():
            if isinstance(value, SecretStr):  # scrubbed from every event and every printed line from now on
                register_secret(value.get_secret_value())
    return settings
